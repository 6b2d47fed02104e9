//! One TCP connection to PTDaemon: a command is a line ending `\r\n`, its reply one line
//! (trailing `\r` stripped). Every write has a timeout and every reply a deadline, so a
//! stalled daemon, or one trickling bytes without ever ending the line, gives an error
//! instead of a hang.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Longer than any reply PTDaemon sends in one line (an RL line of a many-channel meter is a
/// few hundred bytes); a peer sending more without a line break is not PTDaemon.
const MAX_LINE: u64 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub(super) enum LinkError {
    #[error("no reply to `{command}` within {timeout:?}")]
    Timeout { command: String, timeout: Duration },
    #[error("the connection closed (no reply to `{command}`)")]
    Closed { command: String },
    #[error("`{command}` failed: {source}")]
    Io { command: String, source: io::Error },
    #[error("a reply to `{command}` has no line break in its first {MAX_LINE} bytes")]
    TooLong { command: String },
}

pub(super) struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    timeout: Duration,
}

impl Connection {
    /// Connects to `address` (`host:port`), trying each address it resolves to.
    pub(super) fn open(address: &str, timeout: Duration) -> io::Result<Connection> {
        let mut last_error = io::Error::new(
            io::ErrorKind::NotFound,
            "the host name resolves to no address",
        );
        for socket_address in address.to_socket_addrs()? {
            match TcpStream::connect_timeout(&socket_address, timeout) {
                Ok(stream) => {
                    stream.set_read_timeout(Some(timeout))?;
                    stream.set_write_timeout(Some(timeout))?;
                    // Commands are single short lines: send each at once.
                    stream.set_nodelay(true)?;
                    let writer = stream.try_clone()?;
                    return Ok(Connection {
                        reader: BufReader::new(stream),
                        writer,
                        timeout,
                    });
                }
                Err(error) => last_error = error,
            }
        }
        Err(last_error)
    }

    /// Sends `command` and reads its one-line reply.
    pub(super) fn ask(&mut self, command: &str) -> Result<String, LinkError> {
        self.send(command)?;
        self.read_line(command)
    }

    pub(super) fn send(&mut self, command: &str) -> Result<(), LinkError> {
        let line = format!("{command}\r\n");
        self.writer
            .write_all(line.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(|error| self.classify(command, error))
    }

    /// The next line the daemon sends, as a reply to `command`, within the timeout.
    pub(super) fn read_line(&mut self, command: &str) -> Result<String, LinkError> {
        self.read_line_by(command, Instant::now() + self.timeout)
    }

    /// The next line the daemon sends, all of it by `deadline`: each read waits at most for
    /// what is left, so bytes trickling in never extend it.
    pub(super) fn read_line_by(
        &mut self,
        command: &str,
        deadline: Instant,
    ) -> Result<String, LinkError> {
        let mut bytes = Vec::new();
        loop {
            let remaining = deadline.saturating_duration_since(Instant::now());
            if remaining.is_zero() {
                return Err(self.timed_out(command));
            }
            self.reader
                .get_ref()
                .set_read_timeout(Some(remaining))
                .map_err(|error| self.classify(command, error))?;
            let timeout = self.timeout;
            let buffered = self
                .reader
                .fill_buf()
                .map_err(|error| classify(command, timeout, error))?;
            if buffered.is_empty() {
                // Closed, before a reply or in the middle of one.
                return Err(LinkError::Closed {
                    command: command.to_owned(),
                });
            }
            let (taken, ended) = match buffered.iter().position(|&b| b == b'\n') {
                Some(end) => (end + 1, true),
                None => (buffered.len(), false),
            };
            bytes.extend_from_slice(&buffered[..taken]);
            self.reader.consume(taken);
            if ended {
                break;
            }
            if bytes.len() as u64 >= MAX_LINE {
                return Err(LinkError::TooLong {
                    command: command.to_owned(),
                });
            }
        }
        let line = String::from_utf8_lossy(&bytes);
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// Whether the daemon has closed the connection (or reset it) while it was idle; checked
    /// without blocking, so a meter lost during a run is found before the settle wait.
    pub(super) fn peer_closed(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let stream = self.reader.get_ref();
        if stream.set_nonblocking(true).is_err() {
            return false;
        }
        let mut byte = [0u8; 1];
        let closed = match stream.peek(&mut byte) {
            Ok(0) => true,
            Ok(_) => false,
            Err(error) => error.kind() != io::ErrorKind::WouldBlock,
        };
        let _ = stream.set_nonblocking(false);
        closed
    }

    fn timed_out(&self, command: &str) -> LinkError {
        LinkError::Timeout {
            command: command.to_owned(),
            timeout: self.timeout,
        }
    }

    fn classify(&self, command: &str, error: io::Error) -> LinkError {
        classify(command, self.timeout, error)
    }
}

/// A failed read or write as a [`LinkError`]: a timeout, or the error itself.
fn classify(command: &str, timeout: Duration, error: io::Error) -> LinkError {
    let command = command.to_owned();
    match error.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            LinkError::Timeout { command, timeout }
        }
        _ => LinkError::Io {
            command,
            source: error,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_reply_trickling_in_byte_by_byte_times_out_at_the_deadline() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            // One byte every 50 ms, never a line break: each read succeeds in time.
            while peer.write_all(b"x").is_ok() {
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let mut link = Connection::open(&address, Duration::from_millis(500)).unwrap();
        let started = Instant::now();
        let error = link.read_line("Watts").unwrap_err();
        assert!(matches!(error, LinkError::Timeout { .. }), "{error}");
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn a_reply_split_over_reads_is_one_line() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap().to_string();
        std::thread::spawn(move || {
            let (mut peer, _) = listener.accept().unwrap();
            for part in [&b"Watts,2"[..], b"12.5\r", b"\nnext\r\n"] {
                peer.write_all(part).unwrap();
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        let mut link = Connection::open(&address, Duration::from_secs(5)).unwrap();
        assert_eq!(link.read_line("Watts").unwrap(), "Watts,212.5");
        assert_eq!(link.read_line("next").unwrap(), "next");
    }
}
