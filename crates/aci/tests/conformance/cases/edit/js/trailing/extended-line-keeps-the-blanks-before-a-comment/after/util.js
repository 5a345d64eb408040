const a = 1;  // first
const b = 2;
export { a, b };
