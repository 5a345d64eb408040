    int n = 0;
    /* ... */
    return n + 1;
