CREATE TABLE users (
    id INTEGER PRIMARY KEY,
    -- ... other columns ...
    deleted_at TIMESTAMP
);
