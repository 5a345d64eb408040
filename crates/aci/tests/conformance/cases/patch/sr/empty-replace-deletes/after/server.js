const express = require("express");

const app = express();
const port = process.env.PORT || 3000;

function parseLimit(value) {
  const n = parseInt(value, 10);
  return Number.isNaN(n) ? 20 : n;
}

app.get("/items", (req, res) => {
  const limit = parseLimit(req.query.limit);
  res.json({ items: [], limit });
});

app.listen(port, () => {
  console.log(`listening on ${port}`);
});
