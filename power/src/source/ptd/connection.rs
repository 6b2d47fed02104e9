//! One TCP connection to PTDaemon: a command is a line ending `\r\n`, its reply one line
//! (trailing `\r` stripped). Every read and write has a timeout, so a stalled daemon gives an
//! error instead of a hang.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

/// Longer than any reply PTDaemon sends in one line (an RL line of a many-channel meter is a
/// few hundred bytes); a peer sending more without a line break is not PTDaemon.
const MAX_LINE: u64 = 64 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum LinkError {
    #[error("no reply to `{command}` within {timeout:?}")]
    Timeout { command: String, timeout: Duration },
    #[error("the connection closed (no reply to `{command}`)")]
    Closed { command: String },
    #[error("`{command}` failed: {source}")]
    Io { command: String, source: io::Error },
    #[error("a reply to `{command}` has no line break in its first {MAX_LINE} bytes")]
    TooLong { command: String },
}

pub struct Connection {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    timeout: Duration,
}

impl Connection {
    /// Connects to `address` (`host:port`), trying each address it resolves to.
    pub fn open(address: &str, timeout: Duration) -> io::Result<Connection> {
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
    pub fn ask(&mut self, command: &str) -> Result<String, LinkError> {
        self.send(command)?;
        self.read_line(command)
    }

    pub fn send(&mut self, command: &str) -> Result<(), LinkError> {
        let line = format!("{command}\r\n");
        self.writer
            .write_all(line.as_bytes())
            .and_then(|()| self.writer.flush())
            .map_err(|error| self.classify(command, error))
    }

    /// The next line the daemon sends, as a reply to `command`.
    pub fn read_line(&mut self, command: &str) -> Result<String, LinkError> {
        let mut bytes = Vec::new();
        let read = (&mut self.reader)
            .take(MAX_LINE)
            .read_until(b'\n', &mut bytes)
            .map_err(|error| self.classify(command, error))?;
        if read == 0 {
            return Err(LinkError::Closed {
                command: command.to_owned(),
            });
        }
        if bytes.last() != Some(&b'\n') {
            return Err(if read as u64 >= MAX_LINE {
                LinkError::TooLong {
                    command: command.to_owned(),
                }
            } else {
                // The daemon closed the connection in the middle of a line.
                LinkError::Closed {
                    command: command.to_owned(),
                }
            });
        }
        let line = String::from_utf8_lossy(&bytes);
        Ok(line.trim_end_matches(['\r', '\n']).to_owned())
    }

    /// Whether the daemon has closed the connection (or reset it) while it was idle; checked
    /// without blocking, so a meter lost during a run is found before the settle wait.
    pub fn peer_closed(&self) -> bool {
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

    fn classify(&self, command: &str, error: io::Error) -> LinkError {
        let command = command.to_owned();
        match error.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => LinkError::Timeout {
                command,
                timeout: self.timeout,
            },
            _ => LinkError::Io {
                command,
                source: error,
            },
        }
    }
}
