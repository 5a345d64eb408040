  const out = [];
