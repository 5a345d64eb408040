(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(compact_constructor_declaration name: (identifier) @name) @definition.method
(field_declaration (modifiers) @modifiers declarator: (variable_declarator name: (identifier) @name)
  (#match? @modifiers "(^|[^A-Za-z_])static([^A-Za-z_]|$)")
  (#match? @modifiers "(^|[^A-Za-z_])final([^A-Za-z_]|$)")) @definition.constant
