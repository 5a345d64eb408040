//! GLM 4.5–4.7 inside a `<tool_call>` tag: the tool's name, then `<arg_key>`/`<arg_value>`
//! pairs. The tag pass hands the body over.

use serde_json::{Map, Value};

use super::super::classify::resolve;
use super::super::scan::{Scan, Site};
use super::super::CallFormat;
use super::typed_value;

impl Scan<'_> {
    /// GLM 4.5–4.7 in a `<tool_call>` tag: the name, then `<arg_key>k</arg_key><arg_value>v
    /// </arg_value>` pairs. Values are raw text, typed by the tool's declared kinds.
    pub(in super::super) fn glm(&mut self, site: &Site, body: &str) {
        let (name, mut rest) = match body.find("<arg_key>") {
            Some(k) => (body[..k].trim(), &body[k..]),
            None => (body.trim(), ""),
        };
        let tool = resolve(name, self.offered);
        let mut args = Map::new();
        let mut repairs = Vec::new();
        while let Some(k) = rest.find("<arg_key>") {
            let after = &rest[k + "<arg_key>".len()..];
            let Some((key, after)) = after.split_once("</arg_key>") else {
                self.unreadable(
                    site.key,
                    format!("a GLM call to {name} whose <arg_key> is not closed"),
                );
                return;
            };
            let after = after.trim_start();
            let Some(v) = after.strip_prefix("<arg_value>") else {
                self.unreadable(
                    site.key,
                    format!("a GLM call to {name} whose {key} has no <arg_value>"),
                );
                return;
            };
            let (raw, next) = v.split_once("</arg_value>").unwrap_or((v, ""));
            let kind = tool
                .and_then(|t| t.params.iter().find(|(n, _)| n == key.trim()))
                .map(|(_, k)| *k);
            args.insert(
                key.trim().to_string(),
                typed_value(kind, raw, true, &mut repairs),
            );
            rest = next;
        }
        let site = Site {
            format: CallFormat::Glm,
            ..site.clone()
        };
        self.call(&site, name, Value::Object(args), repairs);
    }
}
