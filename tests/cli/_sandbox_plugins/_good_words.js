// What the good plugin's tool says; a module of its graph, so changing it is refused.
export const says = (text) => `good says ${text}`;
