export function total(items) {
  let sum = 0;
  for (const item of items) {
    if (item.qty > 0) {
      sum += item.price * item.qty;
      count += 1;
    }
  }
  return sum;
}
