; Function names sit at the bottom of a chain of declarators: found in code, not here.
(field_declaration_list (function_definition) @definition.method)
(field_declaration_list (template_declaration (function_definition) @definition.method))
(field_declaration_list (field_declaration declarator: (function_declarator)) @definition.method)
(field_declaration_list (field_declaration declarator: (pointer_declarator declarator: (function_declarator))) @definition.method)
(field_declaration_list (field_declaration declarator: (reference_declarator (function_declarator))) @definition.method)
(field_declaration_list (declaration declarator: (function_declarator)) @definition.method)
(field_declaration_list (template_declaration (declaration declarator: (function_declarator)) @definition.method))
(function_definition declarator: (function_declarator declarator: (qualified_identifier))) @definition.method
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (qualified_identifier)))) @definition.method
(function_definition declarator: (reference_declarator (function_declarator declarator: (qualified_identifier)))) @definition.method
(function_definition) @definition.function
(declaration declarator: (function_declarator)) @definition.function
(declaration declarator: (pointer_declarator declarator: (function_declarator))) @definition.function
(declaration declarator: (reference_declarator (function_declarator))) @definition.function
(class_specifier name: (_) @name body: (_)) @definition.class
(struct_specifier name: (_) @name body: (_)) @definition.struct
(union_specifier name: (_) @name body: (_)) @definition.struct
(enum_specifier name: (_) @name body: (_)) @definition.enum
(namespace_definition name: (_) @name) @definition.module
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition) @definition.type
(alias_declaration name: (type_identifier) @name) @definition.type
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.macro
