(pair key: (string (string_content) @name)) @definition.key
(pair key: (string) @name) @definition.key
