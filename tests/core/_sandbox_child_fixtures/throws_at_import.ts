// A plugin whose module throws while it is imported.

throw new Error("no plugin today");
