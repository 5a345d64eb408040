//! What every incoming message is checked for before the MCP library sees it, on both
//! transports, so that a malformed message gets the JSON-RPC error its fault calls for — never
//! silence, never "method not found" for a method MCP defines, and never the end of the
//! server:
//! - not JSON: `-32700` (parse error), `"id": null`;
//! - JSON that is no JSON-RPC message (not one object, no `"jsonrpc": "2.0"`, an id that is
//!   neither a string nor a number, neither a method nor a result): `-32600`, `"id": null`;
//! - a method MCP defines with params that do not fit it: `-32602`, saying what is wrong.

use rmcp::model::{
    CallToolRequestParams, CompleteRequestParams, GetPromptRequestParams, InitializeRequestParams,
    PaginatedRequestParams, ReadResourceRequestParams, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

/// JSON-RPC's codes for the faults above.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const INVALID_PARAMS: i64 = -32602;

/// What to do with one incoming message.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// Hand it to the MCP library.
    Pass,
    /// Answer it with this error response instead.
    Answer(Value),
}

impl Verdict {
    /// The JSON-RPC code of the answer, if there is one.
    pub fn code(&self) -> Option<i64> {
        match self {
            Verdict::Pass => None,
            Verdict::Answer(v) => v["error"]["code"].as_i64(),
        }
    }
}

/// An error response.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// Checks one message (a line on stdio, a body over HTTP).
pub fn check(bytes: &[u8]) -> Verdict {
    match parse(bytes) {
        Ok(value) => check_message(&value),
        Err(answer) => Verdict::Answer(answer),
    }
}

/// The message as JSON, or the parse error (-32700) that answers it.
pub fn parse(bytes: &[u8]) -> Result<Value, Value> {
    serde_json::from_slice(bytes).map_err(|e| {
        error(
            Value::Null,
            PARSE_ERROR,
            format!("parse error: the message is not JSON ({e})"),
        )
    })
}

/// Checks a parsed message.
pub fn check_message(value: &Value) -> Verdict {
    let invalid = |why: &str| {
        Verdict::Answer(error(
            Value::Null,
            INVALID_REQUEST,
            format!("invalid request: {why}"),
        ))
    };
    let Some(object) = value.as_object() else {
        return invalid("a message is one JSON object (MCP has no batches)");
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("\"jsonrpc\" must be \"2.0\"");
    }
    let id = object.get("id");
    if let Some(id) = id {
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return invalid("\"id\" must be a string or an integer");
        }
    }
    match object.get("method") {
        Some(Value::String(method)) => {
            // A notification gets no answer, whatever is wrong with it.
            let Some(id) = id else {
                return Verdict::Pass;
            };
            // The handshake's params are checked here: before a session exists the library
            // would answer with something else, or end the connection.
            match (method.as_str(), fit(method, object.get("params"))) {
                ("initialize", Some(Err(why))) => Verdict::Answer(error(
                    id.clone(),
                    INVALID_PARAMS,
                    format!("invalid params for initialize: {why}"),
                )),
                _ => Verdict::Pass,
            }
        }
        Some(_) => invalid("\"method\" must be a string"),
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            Verdict::Pass
        }
        None => invalid("a request needs \"method\" (and a response \"result\" or \"error\")"),
    }
}

/// Why `params` do not fit `method`, a method MCP defines, for the handler that gets a request
/// of such a method only when the library could not parse its params; `None` for a method MCP
/// does not define.
pub fn bad_params(method: &str, params: Option<&Value>) -> Option<String> {
    Some(match fit(method, params)? {
        Err(why) => format!("invalid params for {method}: {why}"),
        Ok(()) => {
            format!("invalid params for {method}: they do not have the shape MCP defines for it")
        }
    })
}

/// Whether `params` fit `method`; `None` for a method MCP does not define.
fn fit(method: &str, params: Option<&Value>) -> Option<Result<(), String>> {
    fn fits<T: DeserializeOwned>(params: Option<&Value>) -> Result<(), String> {
        let params = params.cloned().unwrap_or(Value::Null);
        serde_json::from_value::<T>(params)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    fn optional<T: DeserializeOwned>(params: Option<&Value>) -> Result<(), String> {
        match params {
            None | Some(Value::Null) => Ok(()),
            some => fits::<T>(some),
        }
    }
    Some(match method {
        "initialize" => fits::<InitializeRequestParams>(params).map_err(|e| {
            format!("{e}; initialize takes {{\"protocolVersion\", \"capabilities\", \"clientInfo\": {{\"name\", \"version\"}}}}")
        }),
        "tools/call" => fits::<CallToolRequestParams>(params).map_err(|e| {
            format!("{e}; tools/call takes {{\"name\": TOOL, \"arguments\": {{...}}}} (arguments an object)")
        }),
        "tools/list" | "resources/list" | "resources/templates/list" | "prompts/list" => {
            optional::<PaginatedRequestParams>(params)
        }
        "resources/read" => fits::<ReadResourceRequestParams>(params),
        "resources/subscribe" => fits::<SubscribeRequestParams>(params),
        "resources/unsubscribe" => fits::<UnsubscribeRequestParams>(params),
        "prompts/get" => fits::<GetPromptRequestParams>(params),
        "logging/setLevel" => match params {
            Some(Value::Object(o)) if o.get("level").is_some_and(Value::is_string) => Ok(()),
            _ => Err("logging/setLevel takes {\"level\": LEVEL}".into()),
        },
        "completion/complete" => fits::<CompleteRequestParams>(params),
        "ping" => match params {
            None | Some(Value::Null | Value::Object(_)) => Ok(()),
            Some(_) => Err("ping takes no params, or an object".into()),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(text: &str) -> Option<i64> {
        check(text.as_bytes()).code()
    }

    #[test]
    fn each_fault_gets_its_code_and_a_null_id() {
        assert_eq!(code("garbage"), Some(PARSE_ERROR));
        assert_eq!(code("{\"jsonrpc\":\"2.0\",\"id\":1,"), Some(PARSE_ERROR));
        assert_eq!(code("[]"), Some(INVALID_REQUEST));
        assert_eq!(
            code("[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]"),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":5}"),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code("{\"id\":1,\"method\":\"ping\"}"),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}"),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}"),
            Some(INVALID_REQUEST)
        );
        assert_eq!(
            code("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}"),
            Some(INVALID_REQUEST)
        );
        let Verdict::Answer(v) = check(b"{\"jsonrpc\":\"2.0\",\"id\":5}") else {
            panic!()
        };
        assert_eq!(v["id"], Value::Null);
        assert!(v.as_object().unwrap().contains_key("id"));
    }

    #[test]
    fn good_messages_pass() {
        for ok in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","method":"initialize"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}"#,
            // tools/call params are the handler's to judge: it knows the session's state.
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ws_read","arguments":"text"}}"#,
        ] {
            assert_eq!(check(ok.as_bytes()), Verdict::Pass, "{ok}");
        }
    }

    #[test]
    fn a_handshake_without_params_is_invalid_params() {
        let Verdict::Answer(v) = check(br#"{"jsonrpc":"2.0","id":9,"method":"initialize"}"#) else {
            panic!()
        };
        assert_eq!(v["id"], 9);
        assert_eq!(v["error"]["code"], INVALID_PARAMS);
        assert!(v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("initialize takes {\"protocolVersion\""));
    }

    #[test]
    fn malformed_tool_calls_say_what_is_wrong() {
        let why = bad_params(
            "tools/call",
            Some(&json!({"name": "ws_read", "arguments": "text"})),
        )
        .unwrap();
        assert!(
            why.starts_with("invalid params for tools/call: invalid type: string \"text\""),
            "{why}"
        );
        let why = bad_params("tools/call", Some(&json!({"arguments": {}}))).unwrap();
        assert!(why.contains("missing field `name`"), "{why}");
        assert!(bad_params("tools/list", Some(&json!({"cursor": 5}))).is_some());
        assert_eq!(fit("tools/list", None), Some(Ok(())));
        assert!(bad_params("slmcode/other", None).is_none());
    }
}
