//! The unpickling machine: a stack, a mark stack and a memo, run over the
//! opcodes without ever importing or calling anything.
//!
//! Values live in an arena and the stack and memo hold indices into it, so a
//! container that is memoized while empty and filled afterwards (which is how
//! every pickler writes lists and dicts) is seen filled through the memo, as
//! in Python. The arena is unfolded into a [`Value`] tree at STOP.

use std::collections::HashMap;

use super::error::PickleError;
use super::opcode::{self as op, name};
use super::value::{Call, Object, Value};

/// Deeper than any real pickle of plain data, and shallow enough that
/// unfolding (and later dropping) the tree cannot overflow the stack.
pub const MAX_DEPTH: usize = 200;
/// Memo references can repeat one value any number of times, so a small
/// file could unfold into more values than memory holds. Unfolding is
/// refused past this many bytes beyond what a pickle without sharing could
/// need ([`unfold_limit`]).
pub const UNFOLD_SLACK: usize = 64 << 20;

/// Bytes of values a pickle of `len` bytes may unfold into: each opcode of
/// at least one byte gives at most one value, plus the slack.
pub fn unfold_limit(len: usize) -> usize {
    UNFOLD_SLACK.saturating_add(len.saturating_mul(std::mem::size_of::<Value>()))
}

type Id = usize;

enum Node {
    Leaf(Value),
    List(Vec<Id>),
    Tuple(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    FrozenSet(Vec<Id>),
    Object(ObjectNode),
}

struct ObjectNode {
    call: Call,
    callable: Id,
    args: Id,
    kwargs: Option<Id>,
    state: Option<Id>,
    items: Vec<Id>,
    entries: Vec<(Id, Id)>,
}

/// Reads a whole pickle (protocol 2 to 5) and returns the value STOP pops.
/// As in Python, bytes after STOP are not looked at.
pub fn parse_pickle(data: &[u8]) -> Result<Value, PickleError> {
    match data.first() {
        None => return Err(PickleError::Empty),
        Some(&op::PROTO) => {}
        Some(&first) => return Err(PickleError::NotPickle { first }),
    }
    let mut m = Machine {
        input: Input { data, pos: 0 },
        nodes: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        at: 0,
        opcode: 0,
    };
    let root = m.run()?;
    let mut unfold = Unfold {
        nodes: &m.nodes,
        limit: unfold_limit(data.len()),
        left: unfold_limit(data.len()),
    };
    unfold.value(root, 0)
}

struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: u64, what: &'static str) -> Result<&'a [u8], PickleError> {
        let left = self.data.len() - self.pos;
        // a length read from the file is checked before anything is sliced
        // or allocated for it
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n <= left)
            .ok_or(PickleError::Truncated {
                offset: self.data.len(),
                what,
            })?;
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], PickleError> {
        let s = self.take(N as u64, what)?;
        Ok(s.try_into().expect("take returned N bytes"))
    }

    fn u8(&mut self, what: &'static str) -> Result<u8, PickleError> {
        Ok(self.array::<1>(what)?[0])
    }

    fn line(&mut self, what: &'static str) -> Result<&'a [u8], PickleError> {
        let rest = &self.data[self.pos..];
        let n = rest
            .iter()
            .position(|&c| c == b'\n')
            .ok_or(PickleError::Truncated {
                offset: self.data.len(),
                what,
            })?;
        self.pos += n + 1;
        Ok(&rest[..n])
    }
}

struct Machine<'a> {
    input: Input<'a>,
    nodes: Vec<Node>,
    stack: Vec<Id>,
    marks: Vec<usize>,
    memo: HashMap<u64, Id>,
    /// Offset and byte of the opcode being run, for errors.
    at: usize,
    opcode: u8,
}

impl Machine<'_> {
    fn run(&mut self) -> Result<Id, PickleError> {
        loop {
            self.at = self.input.pos;
            if self.at == self.input.data.len() {
                return Err(PickleError::Truncated {
                    offset: self.at,
                    what: "the next opcode (no STOP yet)",
                });
            }
            self.opcode = self.input.u8("an opcode")?;
            if self.opcode == op::STOP {
                return self.pop();
            }
            self.step()?;
        }
    }

    fn step(&mut self) -> Result<(), PickleError> {
        let code = self.opcode;
        match code {
            op::PROTO => {
                let protocol = self.input.u8("PROTO's protocol number")?;
                if protocol > 5 {
                    return Err(PickleError::Protocol {
                        protocol,
                        offset: self.at,
                    });
                }
            }
            op::FRAME => {
                // frames only group opcodes for buffered reading; the length
                // must still fit in what is left
                let len = u64::from_le_bytes(self.input.array("FRAME's length")?);
                if len > (self.input.data.len() - self.input.pos) as u64 {
                    return Err(PickleError::Truncated {
                        offset: self.input.data.len(),
                        what: "a FRAME",
                    });
                }
            }
            op::MARK => self.marks.push(self.stack.len()),
            op::POP => {
                // pickle.py pops the mark when the stack above it is empty
                if self.stack.len() > self.marks.last().copied().unwrap_or(0) {
                    self.stack.pop();
                } else {
                    self.pop_mark()?;
                }
            }
            op::POP_MARK => {
                self.pop_mark()?;
            }
            op::DUP => {
                let top = self.top()?;
                self.stack.push(top);
            }
            op::NONE => self.push(Node::Leaf(Value::None)),
            op::NEWTRUE => self.push(Node::Leaf(Value::Bool(true))),
            op::NEWFALSE => self.push(Node::Leaf(Value::Bool(false))),
            op::BININT => {
                let v = i32::from_le_bytes(self.input.array("BININT's 4 bytes")?);
                self.push(Node::Leaf(Value::Int(i64::from(v))));
            }
            op::BININT1 => {
                let v = self.input.u8("BININT1's byte")?;
                self.push(Node::Leaf(Value::Int(i64::from(v))));
            }
            op::BININT2 => {
                let v = u16::from_le_bytes(self.input.array("BININT2's 2 bytes")?);
                self.push(Node::Leaf(Value::Int(i64::from(v))));
            }
            op::LONG1 => {
                let n = self.input.u8("LONG1's length")?;
                let b = self.input.take(u64::from(n), "LONG1's bytes")?;
                self.push(Node::Leaf(long(b)));
            }
            op::LONG4 => {
                let n = i32::from_le_bytes(self.input.array("LONG4's length")?);
                let n = u64::try_from(n).map_err(|_| self.malformed("negative length"))?;
                let b = self.input.take(n, "LONG4's bytes")?;
                self.push(Node::Leaf(long(b)));
            }
            op::BINFLOAT => {
                let v = f64::from_be_bytes(self.input.array("BINFLOAT's 8 bytes")?);
                self.push(Node::Leaf(Value::Float(v)));
            }
            op::SHORT_BINUNICODE | op::BINUNICODE | op::BINUNICODE8 => {
                let n = self.length(code)?;
                let b = self.input.take(n, "a string's bytes")?;
                let s = std::str::from_utf8(b).map_err(|e| self.malformed(format!("{e}")))?;
                self.push(Node::Leaf(Value::Str(s.to_string())));
            }
            op::SHORT_BINSTRING | op::BINSTRING => {
                // a Python 2 str; Python 3 decodes it as ASCII by default
                let n = self.length(code)?;
                let b = self.input.take(n, "a string's bytes")?;
                if !b.is_ascii() {
                    return Err(self.malformed("a Python 2 str that is not ASCII"));
                }
                let s = String::from_utf8_lossy(b).into_owned();
                self.push(Node::Leaf(Value::Str(s)));
            }
            op::SHORT_BINBYTES | op::BINBYTES | op::BINBYTES8 => {
                let n = self.length(code)?;
                let b = self.input.take(n, "a bytes object")?;
                self.push(Node::Leaf(Value::Bytes(b.to_vec())));
            }
            op::BYTEARRAY8 => {
                let n = self.length(code)?;
                let b = self.input.take(n, "a bytearray")?;
                self.push(Node::Leaf(Value::ByteArray(b.to_vec())));
            }
            op::READONLY_BUFFER => {
                self.top()?;
            }
            op::EMPTY_LIST => self.push(Node::List(Vec::new())),
            op::EMPTY_TUPLE => self.push(Node::Tuple(Vec::new())),
            op::EMPTY_DICT => self.push(Node::Dict(Vec::new())),
            op::EMPTY_SET => self.push(Node::Set(Vec::new())),
            op::LIST => {
                let items = self.pop_mark()?;
                self.push(Node::List(items));
            }
            op::TUPLE => {
                let items = self.pop_mark()?;
                self.push(Node::Tuple(items));
            }
            op::FROZENSET => {
                let items = self.pop_mark()?;
                self.push(Node::FrozenSet(items));
            }
            op::DICT => {
                let items = self.pop_mark()?;
                let pairs = self.pairs(items)?;
                self.push(Node::Dict(pairs));
            }
            op::TUPLE1 | op::TUPLE2 | op::TUPLE3 => {
                let n = usize::from(code - op::TUPLE1) + 1;
                if self.stack.len() < self.marks.last().copied().unwrap_or(0) + n {
                    return Err(self.malformed(format!("needs {n} values on the stack")));
                }
                let items = self.stack.split_off(self.stack.len() - n);
                self.push(Node::Tuple(items));
            }
            op::APPEND => {
                let v = self.pop()?;
                self.append(vec![v])?;
            }
            op::APPENDS => {
                let items = self.pop_mark()?;
                self.append(items)?;
            }
            op::SETITEM => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![(k, v)])?;
            }
            op::SETITEMS => {
                let items = self.pop_mark()?;
                let pairs = self.pairs(items)?;
                self.set_items(pairs)?;
            }
            op::ADDITEMS => {
                let items = self.pop_mark()?;
                let top = self.top()?;
                match &mut self.nodes[top] {
                    Node::Set(v) => v.extend(items),
                    Node::Object(o) => o.items.extend(items),
                    _ => return Err(self.wrong_target(top, "a set")),
                }
            }
            op::BINGET | op::LONG_BINGET => {
                let index = self.memo_index(code)?;
                let id = *self.memo.get(&index).ok_or_else(|| {
                    self.malformed(format!("memo entry {index} was never stored"))
                })?;
                self.stack.push(id);
            }
            op::BINPUT | op::LONG_BINPUT => {
                let index = self.memo_index(code)?;
                let top = self.top()?;
                self.memo.insert(index, top);
            }
            op::MEMOIZE => {
                let top = self.top()?;
                self.memo.insert(self.memo.len() as u64, top);
            }
            op::GLOBAL => {
                let module = self.text_line("GLOBAL's module")?;
                let name = self.text_line("GLOBAL's name")?;
                self.push(Node::Leaf(Value::Global { module, name }));
            }
            op::STACK_GLOBAL => {
                let name = self.pop()?;
                let module = self.pop()?;
                let (Some(module), Some(name)) = (self.leaf_str(module), self.leaf_str(name))
                else {
                    return Err(self.malformed("module and name must both be str"));
                };
                self.push(Node::Leaf(Value::Global { module, name }));
            }
            op::REDUCE => {
                let args = self.pop()?;
                let callable = self.pop()?;
                self.push_object(Call::Reduce, callable, args, None);
            }
            op::NEWOBJ => {
                let args = self.pop()?;
                let cls = self.pop()?;
                self.push_object(Call::NewObj, cls, args, None);
            }
            op::NEWOBJ_EX => {
                let kwargs = self.pop()?;
                let args = self.pop()?;
                let cls = self.pop()?;
                self.push_object(Call::NewObj, cls, args, Some(kwargs));
            }
            op::INST => {
                let module = self.text_line("INST's module")?;
                let name = self.text_line("INST's name")?;
                let args = self.pop_mark()?;
                let callable = self.add(Node::Leaf(Value::Global { module, name }));
                let args = self.add(Node::Tuple(args));
                self.push_object(Call::Inst, callable, args, None);
            }
            op::OBJ => {
                let mut items = self.pop_mark()?;
                if items.is_empty() {
                    return Err(self.malformed("no class after the MARK"));
                }
                let cls = items.remove(0);
                let args = self.add(Node::Tuple(items));
                self.push_object(Call::Inst, cls, args, None);
            }
            op::BUILD => {
                let state = self.pop()?;
                let top = self.top()?;
                match &mut self.nodes[top] {
                    Node::Object(o) => o.state = Some(state),
                    _ => return Err(self.wrong_target(top, "an object")),
                }
            }
            op::PERSID | op::BINPERSID => {
                return Err(self.unsupported("a persistent id needs the pickler's own loader"))
            }
            op::EXT1 | op::EXT2 | op::EXT4 => {
                return Err(self.unsupported("the copyreg extension registry is not available"))
            }
            op::NEXT_BUFFER => {
                return Err(self.unsupported("an out-of-band buffer is not in the file"))
            }
            op::INT | op::LONG | op::FLOAT | op::STRING | op::UNICODE | op::GET | op::PUT => {
                return Err(self.unsupported("protocol 0 text opcode"))
            }
            _ => {
                return Err(PickleError::UnknownOpcode {
                    byte: code,
                    offset: self.at,
                })
            }
        }
        Ok(())
    }

    fn add(&mut self, node: Node) -> Id {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    fn push(&mut self, node: Node) {
        let id = self.add(node);
        self.stack.push(id);
    }

    fn push_object(&mut self, call: Call, callable: Id, args: Id, kwargs: Option<Id>) {
        self.push(Node::Object(ObjectNode {
            call,
            callable,
            args,
            kwargs,
            state: None,
            items: Vec::new(),
            entries: Vec::new(),
        }));
    }

    /// Values pushed since the last MARK cannot be popped singly.
    fn pop(&mut self) -> Result<Id, PickleError> {
        if self.stack.len() <= self.marks.last().copied().unwrap_or(0) {
            return Err(self.malformed("the stack is empty"));
        }
        Ok(self.stack.pop().expect("checked above"))
    }

    fn top(&self) -> Result<Id, PickleError> {
        match self.stack.last() {
            Some(&id) if self.stack.len() > self.marks.last().copied().unwrap_or(0) => Ok(id),
            _ => Err(self.malformed("the stack is empty")),
        }
    }

    fn pop_mark(&mut self) -> Result<Vec<Id>, PickleError> {
        let mark = self
            .marks
            .pop()
            .ok_or_else(|| self.malformed("no MARK on the stack"))?;
        Ok(self.stack.split_off(mark))
    }

    fn pairs(&self, items: Vec<Id>) -> Result<Vec<(Id, Id)>, PickleError> {
        if !items.len().is_multiple_of(2) {
            return Err(self.malformed(format!("{} values are no key/value pairs", items.len())));
        }
        Ok(items.chunks_exact(2).map(|p| (p[0], p[1])).collect())
    }

    fn append(&mut self, items: Vec<Id>) -> Result<(), PickleError> {
        let top = self.top()?;
        match &mut self.nodes[top] {
            Node::List(v) => v.extend(items),
            Node::Object(o) => o.items.extend(items),
            _ => return Err(self.wrong_target(top, "a list")),
        }
        Ok(())
    }

    fn set_items(&mut self, pairs: Vec<(Id, Id)>) -> Result<(), PickleError> {
        let top = self.top()?;
        match &mut self.nodes[top] {
            Node::Dict(d) => d.extend(pairs),
            Node::Object(o) => o.entries.extend(pairs),
            _ => return Err(self.wrong_target(top, "a dict")),
        }
        Ok(())
    }

    fn length(&mut self, code: u8) -> Result<u64, PickleError> {
        Ok(match code {
            op::SHORT_BINUNICODE | op::SHORT_BINSTRING | op::SHORT_BINBYTES => {
                u64::from(self.input.u8("a 1-byte length")?)
            }
            op::BINSTRING => {
                let n = i32::from_le_bytes(self.input.array("a 4-byte length")?);
                u64::try_from(n).map_err(|_| self.malformed("negative length"))?
            }
            op::BINUNICODE | op::BINBYTES => {
                u64::from(u32::from_le_bytes(self.input.array("a 4-byte length")?))
            }
            _ => u64::from_le_bytes(self.input.array("an 8-byte length")?),
        })
    }

    fn memo_index(&mut self, code: u8) -> Result<u64, PickleError> {
        Ok(if code == op::BINGET || code == op::BINPUT {
            u64::from(self.input.u8("a memo index")?)
        } else {
            u64::from(u32::from_le_bytes(self.input.array("a memo index")?))
        })
    }

    fn text_line(&mut self, what: &'static str) -> Result<String, PickleError> {
        let b = self.input.line(what)?;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|e| self.malformed(format!("{what}: {e}")))
    }

    fn leaf_str(&self, id: Id) -> Option<String> {
        match &self.nodes[id] {
            Node::Leaf(Value::Str(s)) => Some(s.clone()),
            _ => None,
        }
    }

    fn kind(&self, id: Id) -> &'static str {
        match &self.nodes[id] {
            Node::Leaf(v) => v.kind(),
            Node::List(_) => "list",
            Node::Tuple(_) => "tuple",
            Node::Dict(_) => "dict",
            Node::Set(_) => "set",
            Node::FrozenSet(_) => "frozenset",
            Node::Object(_) => "opaque object",
        }
    }

    fn malformed(&self, why: impl Into<String>) -> PickleError {
        PickleError::Malformed {
            name: name(self.opcode).unwrap_or("?"),
            offset: self.at,
            why: why.into(),
        }
    }

    fn unsupported(&self, why: &'static str) -> PickleError {
        PickleError::Unsupported {
            name: name(self.opcode).unwrap_or("?"),
            byte: self.opcode,
            offset: self.at,
            why,
        }
    }

    fn wrong_target(&self, id: Id, wanted: &str) -> PickleError {
        self.malformed(format!(
            "needs {wanted} on the stack, found a {}",
            self.kind(id)
        ))
    }
}

/// LONG1/LONG4 payload: little-endian two's complement, empty meaning 0.
fn long(b: &[u8]) -> Value {
    if b.len() > 8 {
        return Value::BigInt(b.to_vec());
    }
    let fill = if b.last().is_some_and(|&c| c & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut buf = [fill; 8];
    buf[..b.len()].copy_from_slice(b);
    Value::Int(i64::from_le_bytes(buf))
}

struct Unfold<'a> {
    nodes: &'a [Node],
    limit: usize,
    /// Bytes of values still allowed.
    left: usize,
}

impl Unfold<'_> {
    fn value(&mut self, id: Id, depth: usize) -> Result<Value, PickleError> {
        if depth > MAX_DEPTH {
            return Err(PickleError::TooDeep { limit: MAX_DEPTH });
        }
        let payload = match &self.nodes[id] {
            Node::Leaf(Value::Str(s)) => s.len(),
            Node::Leaf(Value::Bytes(b) | Value::ByteArray(b) | Value::BigInt(b)) => b.len(),
            _ => 0,
        };
        self.left = self
            .left
            .checked_sub(std::mem::size_of::<Value>() + payload)
            .ok_or(PickleError::TooLarge { limit: self.limit })?;
        let d = depth + 1;
        Ok(match &self.nodes[id] {
            Node::Leaf(v) => v.clone(),
            Node::List(v) => Value::List(self.values(v, d)?),
            Node::Tuple(v) => Value::Tuple(self.values(v, d)?),
            Node::Set(v) => Value::Set(self.values(v, d)?),
            Node::FrozenSet(v) => Value::FrozenSet(self.values(v, d)?),
            Node::Dict(p) => Value::Dict(self.pairs(p, d)?),
            Node::Object(o) => Value::Object(Box::new(Object {
                call: o.call,
                callable: self.value(o.callable, d)?,
                args: self.value(o.args, d)?,
                kwargs: o.kwargs.map(|k| self.value(k, d)).transpose()?,
                state: o.state.map(|s| self.value(s, d)).transpose()?,
                items: self.values(&o.items, d)?,
                entries: self.pairs(&o.entries, d)?,
            })),
        })
    }

    fn values(&mut self, ids: &[Id], depth: usize) -> Result<Vec<Value>, PickleError> {
        ids.iter().map(|&i| self.value(i, depth)).collect()
    }

    fn pairs(
        &mut self,
        ids: &[(Id, Id)],
        depth: usize,
    ) -> Result<Vec<(Value, Value)>, PickleError> {
        ids.iter()
            .map(|&(k, v)| Ok((self.value(k, depth)?, self.value(v, depth)?)))
            .collect()
    }
}
