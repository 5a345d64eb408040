//! The network under the sandbox: no packet leaves unless the user allows it; loopback mode gives
//! the command a loopback of its own.

use super::*;

/// A listener on this machine's loopback that records whatever arrives until [`Listener::got`]
/// is called — after the command has ended, so anything it sent is already queued.
pub(super) struct Listener {
    pub(super) port: u16,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<u8>>,
}

impl Listener {
    /// What arrived.
    pub(super) fn got(self) -> Vec<u8> {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        self.thread.join().unwrap()
    }
}

pub(super) fn listen() -> Listener {
    use std::io::Read;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let stop = done.clone();
    let thread = std::thread::spawn(move || {
        let mut got = Vec::new();
        loop {
            // Checked before the accept, so one last accept follows the stop.
            let last = stop.load(std::sync::atomic::Ordering::SeqCst);
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(std::time::Duration::from_secs(2)))
                        .unwrap();
                    let _ = s.read_to_end(&mut got);
                    return got;
                }
                Err(_) if last => return got,
                Err(_) => std::thread::sleep(std::time::Duration::from_millis(10)),
            }
        }
    });
    Listener { port, done, thread }
}

const SEND: &str = "import socket, sys\n\
try:\n\
\x20   s = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\n\
\x20   s.sendall(open('secret.txt', 'rb').read())\n\
\x20   s.close()\n\
\x20   print('SENT')\n\
except OSError as e:\n\
\x20   print('BLOCKED', e)\n";

fn send(p: &Project, port: u16, network: &str) -> String {
    p.write("send.py", SEND);
    let allow = format!("python3 send.py {port}");
    let (text, err) = p.tool_env(
        "ws_shell",
        &json!({"command": allow}).to_string(),
        &[
            ("SLMCODE_SHELL_ALLOW", allow.as_str()),
            ("SLMCODE_SHELL_NETWORK", network),
        ],
    );
    assert!(!err, "{text}");
    text
}

#[test]
fn no_packet_leaves_unless_the_user_allows_the_network() {
    if !common::native("the network closed to commands") {
        return;
    }
    let p = Project::new();
    p.write("secret.txt", "PROJECT-SECRET\n");
    for network in ["deny", "loopback"] {
        let listener = listen();
        let text = send(&p, listener.port, network);
        assert!(text.contains("BLOCKED"), "{network}: {text}");
        assert!(
            listener.got().is_empty(),
            "{network}: the packet arrived: {text}"
        );
        if require_full_sandbox(&text) {
            let said = if network == "deny" {
                "[sandbox: network off]"
            } else {
                "[sandbox: network: its own loopback only]"
            };
            assert!(text.contains(said), "{text}");
        }
    }
    let listener = listen();
    let text = send(&p, listener.port, "allow");
    assert!(text.contains("SENT"), "{text}");
    assert!(text.contains("[sandbox: network on]"), "{text}");
    assert_eq!(listener.got(), b"PROJECT-SECRET\n");
}

#[test]
fn loopback_mode_gives_the_command_a_loopback_of_its_own() {
    let p = Project::new();
    let text = allowed_script(
        &p,
        "selfserve.py",
        "import socket, threading\n\
         srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(1)\n\
         port = srv.getsockname()[1]\n\
         threading.Thread(target=lambda: srv.accept()[0].sendall(b'pong'), daemon=True).start()\n\
         c = socket.create_connection(('127.0.0.1', port), timeout=3)\n\
         print('GOT', c.recv(4).decode())\n",
        &[("SLMCODE_SHELL_NETWORK", "loopback")],
    );
    assert!(text.contains("GOT pong"), "{text}");
}
