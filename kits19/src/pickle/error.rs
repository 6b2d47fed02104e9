//! Errors give the byte offset and, where one is to blame, the opcode, so a
//! bad file can be checked against `pickletools.dis` output line by line.

#[derive(Debug, thiserror::Error)]
pub enum PickleError {
    #[error(
        "not a pickle of protocol 2 to 5: it starts with byte {first:#04x}, not the 0x80 PROTO \
         opcode"
    )]
    NotPickle { first: u8 },
    #[error("empty file, not a pickle")]
    Empty,
    #[error(
        "pickle protocol {protocol} (at offset {offset}) is newer than 5, the newest supported"
    )]
    Protocol { protocol: u8, offset: usize },
    #[error("truncated: the data ends at offset {offset} while reading {what}")]
    Truncated { offset: usize, what: &'static str },
    #[error("unknown opcode byte {byte:#04x} at offset {offset}")]
    UnknownOpcode { byte: u8, offset: usize },
    #[error("opcode {name} ({byte:#04x}) at offset {offset} is not supported: {why}")]
    Unsupported {
        name: &'static str,
        byte: u8,
        offset: usize,
        why: &'static str,
    },
    #[error("opcode {name} at offset {offset}: {why}")]
    Malformed {
        name: &'static str,
        offset: usize,
        why: String,
    },
    #[error(
        "the value nests deeper than {limit} levels (or contains itself); refusing to unfold it"
    )]
    TooDeep { limit: usize },
    #[error(
        "shared references unfold into more than {limit} bytes of values; refusing to unfold it"
    )]
    TooLarge { limit: usize },
}
