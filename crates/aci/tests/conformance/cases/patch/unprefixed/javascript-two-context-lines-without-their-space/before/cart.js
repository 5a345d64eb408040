export function total(items) {
  let sum = 0;
  for (const item of items) {
    if (item.qty > 0) {
      sum += item.price * item.qty;
    }
  }
  return sum;
}
