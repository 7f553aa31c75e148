// A plugin module that throws while it is imported, for tests/core/testing_sandbox_test.ts.

throw new Error("broken at import");
