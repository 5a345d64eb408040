(block_mapping_pair key: (_) @name) @definition.key
(flow_pair key: (_) @name) @definition.key
