//! Runaway generation, measured on the stream: a small model that falls into a loop (the same
//! phrase again and again) or rambles on with no sign of a call or an answer streams until
//! `max_tokens` — minutes on slow hardware, turn after turn. The backend watches each reply
//! as it arrives and stops it early; the loop tells the model in one line what happened.

use std::fmt;

/// When a reply counts as runaway. 0 turns a check off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunawayLimits {
    /// The stretch of text, at the end of the reply, that must be one span repeated (at least
    /// four times) for the reply to count as looping.
    pub loop_chars: usize,
    /// How much text a reply may write with no sign of a tool call or a final answer.
    pub text_chars: usize,
}

impl Default for RunawayLimits {
    fn default() -> Self {
        RunawayLimits {
            loop_chars: 3000,
            text_chars: 20_000,
        }
    }
}

/// Why a reply was stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Runaway {
    /// The last `chars` characters were one `period`-character span repeated.
    Loop { period: usize, chars: usize },
    /// `chars` characters with no sign of a call or an answer.
    NoCall { chars: usize },
}

impl fmt::Display for Runaway {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Runaway::Loop { period, chars } => write!(
                f,
                "it repeated the same {period}-character span over its last {chars} characters"
            ),
            Runaway::NoCall { chars } => write!(
                f,
                "it wrote {chars} characters with no tool call and no final answer"
            ),
        }
    }
}

/// What starts a call or the final answer in text: once one is written, the reply is making
/// its call (a long whole-file write is not rambling).
const SIGNS: [&str; 10] = [
    "{",
    "<tool_call",
    "<function",
    "[TOOL_CALLS]",
    "to=functions.",
    "<|tool_call",
    "<｜tool",
    "<minimax:",
    "<invoke",
    "call:",
];

/// How often (in new bytes) the stream is looked at: checks stay cheap on long replies.
const EVERY: usize = 256;

/// The watch over one reply.
#[derive(Debug)]
pub struct Watch {
    limits: RunawayLimits,
    checked_at: usize,
}

impl Watch {
    pub fn new(limits: RunawayLimits) -> Watch {
        Watch {
            limits,
            checked_at: 0,
        }
    }

    /// Looks at the reply so far (`text`, content and reasoning alike for loops; `content`
    /// for the no-call check); `Some` when it has run away.
    pub fn check(&mut self, content: &str, reasoning: &str) -> Option<Runaway> {
        let total = content.len() + reasoning.len();
        if total < self.checked_at + EVERY {
            return None;
        }
        self.checked_at = total;
        self.verdict(content, reasoning)
    }

    /// The same on a whole reply, at once.
    pub fn verdict(&self, content: &str, reasoning: &str) -> Option<Runaway> {
        for text in [content, reasoning] {
            if let Some(r) = looping(text, self.limits.loop_chars) {
                return Some(r);
            }
        }
        let n = self.limits.text_chars;
        (n > 0 && content.len() > n && !SIGNS.iter().any(|s| content.contains(s))).then(|| {
            Runaway::NoCall {
                chars: content.chars().count(),
            }
        })
    }
}

/// Whether the last `window` bytes of `text` are one span of at most a quarter of them,
/// repeated.
fn looping(text: &str, window: usize) -> Option<Runaway> {
    if window == 0 || text.len() < window {
        return None;
    }
    let tail = &text.as_bytes()[text.len() - window..];
    (1..=window / 4)
        .find(|&p| (p..tail.len()).all(|i| tail[i] == tail[i - p]))
        .map(|period| Runaway::Loop {
            period,
            chars: window,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> RunawayLimits {
        RunawayLimits {
            loop_chars: 300,
            text_chars: 2000,
        }
    }

    #[test]
    fn a_loop_and_a_ramble_are_caught_and_a_long_call_is_not() {
        let looping = format!("Let me think. {}", "I will read the file. ".repeat(40));
        assert_eq!(
            Watch::new(limits()).verdict(&looping, ""),
            Some(Runaway::Loop {
                period: 22,
                chars: 300
            })
        );
        // In the reasoning too.
        assert!(Watch::new(limits()).verdict("", &looping).is_some());
        let ramble: String = (0..300)
            .map(|i| format!("Thought {i}: maybe the bug is in part {}. ", i * 13 % 97))
            .collect();
        assert_eq!(
            Watch::new(limits()).verdict(&ramble, ""),
            Some(Runaway::NoCall {
                chars: ramble.chars().count()
            })
        );
        // A long whole-file write: a call, with varied lines.
        let file: String = (0..2000).map(|i| format!("x{i} = {}\\n", i * 7)).collect();
        let call = format!("<tool_call>{{\"name\": \"ws_write\", \"arguments\": {{\"path\": \"a.py\", \"content\": \"{file}\"}}}}</tool_call>");
        assert_eq!(Watch::new(limits()).verdict(&call, ""), None);
        // Off.
        let off = RunawayLimits {
            loop_chars: 0,
            text_chars: 0,
        };
        assert_eq!(Watch::new(off).verdict(&looping, &ramble), None);
    }

    #[test]
    fn the_stream_is_looked_at_every_few_hundred_bytes() {
        let mut watch = Watch::new(limits());
        let mut text = String::new();
        let mut caught_at = None;
        for k in 0..200 {
            text.push_str("again and again ");
            if watch.check(&text, "").is_some() {
                caught_at = Some(k);
                break;
            }
        }
        // Caught within a check interval of the window filling.
        let k = caught_at.expect("caught");
        assert!(k * 16 < 300 + 2 * EVERY, "{k}");
    }
}
