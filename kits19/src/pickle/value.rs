//! What an unpickled file turns into. Python objects that would need code
//! to be built (numpy arrays, dtypes, any class) stay as [`Object`]: the
//! callable's name, its arguments and its state, never resolved or run.

use std::fmt::{self, Write};

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An int outside i64: the little-endian two's-complement bytes of LONG1/LONG4.
    BigInt(Vec<u8>),
    Float(f64),
    Str(String),
    Bytes(Vec<u8>),
    ByteArray(Vec<u8>),
    List(Vec<Value>),
    Tuple(Vec<Value>),
    /// Every pair in file order; [`Value::get`] takes the last of a repeated
    /// key, which is the value Python's dict would end up holding.
    Dict(Vec<(Value, Value)>),
    Set(Vec<Value>),
    FrozenSet(Vec<Value>),
    /// A GLOBAL / STACK_GLOBAL reference, by name only.
    Global {
        module: String,
        name: String,
    },
    Object(Box<Object>),
}

/// How an opaque object was made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Call {
    /// REDUCE: `callable(*args)`.
    Reduce,
    /// NEWOBJ / NEWOBJ_EX: `cls.__new__(cls, *args, **kwargs)`.
    NewObj,
    /// INST / OBJ (protocols 0 and 1).
    Inst,
}

/// An object whose construction the pickle asks for, recorded instead of done.
#[derive(Clone, Debug, PartialEq)]
pub struct Object {
    pub call: Call,
    pub callable: Value,
    pub args: Value,
    pub kwargs: Option<Value>,
    /// BUILD's argument (`__setstate__`), the last one if there were several.
    pub state: Option<Value>,
    /// APPEND(S) onto the object (e.g. a list subclass).
    pub items: Vec<Value>,
    /// SETITEM(S) onto the object (e.g. `collections.OrderedDict`).
    pub entries: Vec<(Value, Value)>,
}

impl Object {
    /// `module.name` of the callable, when it is a global.
    pub fn global_name(&self) -> Option<String> {
        match &self.callable {
            Value::Global { module, name } => Some(format!("{module}.{name}")),
            _ => None,
        }
    }
}

impl Value {
    /// Python's type name, for messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "bool",
            Value::Int(_) | Value::BigInt(_) => "int",
            Value::Float(_) => "float",
            Value::Str(_) => "str",
            Value::Bytes(_) => "bytes",
            Value::ByteArray(_) => "bytearray",
            Value::List(_) => "list",
            Value::Tuple(_) => "tuple",
            Value::Dict(_) => "dict",
            Value::Set(_) => "set",
            Value::FrozenSet(_) => "frozenset",
            Value::Global { .. } => "global",
            Value::Object(_) => "opaque object",
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An int that fits i64; a bool is not one here.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The items of a list or a tuple.
    pub fn as_sequence(&self) -> Option<&[Value]> {
        match self {
            Value::List(v) | Value::Tuple(v) => Some(v),
            _ => None,
        }
    }

    pub fn as_dict(&self) -> Option<&[(Value, Value)]> {
        match self {
            Value::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// `d[key]` for a dict with str keys.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_dict()?
            .iter()
            .rev()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    /// A Python-like repr cut after about `max` characters, for messages
    /// (an array's data bytes would otherwise fill the screen).
    pub fn short_repr(&self, max: usize) -> String {
        let mut out = String::new();
        // the writer only ever fails on purpose, when the budget is spent
        if self
            .write_repr(&mut Budget {
                out: &mut out,
                left: max,
            })
            .is_err()
        {
            out.push('…');
        }
        out
    }

    fn write_repr(&self, f: &mut Budget<'_>) -> fmt::Result {
        match self {
            Value::None => f.write_str("None"),
            Value::Bool(true) => f.write_str("True"),
            Value::Bool(false) => f.write_str("False"),
            Value::Int(i) => write!(f, "{i}"),
            Value::BigInt(b) => write!(f, "<int of {} bytes>", b.len()),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::Str(s) => write!(f, "{s:?}"),
            Value::Bytes(b) => write_bytes(f, "b'", b, "'"),
            Value::ByteArray(b) => write_bytes(f, "bytearray(b'", b, "')"),
            Value::List(v) => write_items(f, "[", v, "]"),
            Value::Tuple(v) if v.len() == 1 => write_items(f, "(", v, ",)"),
            Value::Tuple(v) => write_items(f, "(", v, ")"),
            Value::Set(v) => write_items(f, "{", v, "}"),
            Value::FrozenSet(v) => write_items(f, "frozenset({", v, "})"),
            Value::Dict(d) => {
                f.write_str("{")?;
                for (i, (k, v)) in d.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    k.write_repr(f)?;
                    f.write_str(": ")?;
                    v.write_repr(f)?;
                }
                f.write_str("}")
            }
            Value::Global { module, name } => write!(f, "{module}.{name}"),
            Value::Object(o) => {
                o.callable.write_repr(f)?;
                match &o.args {
                    Value::Tuple(v) => write_items(f, "(", v, ")")?,
                    other => {
                        f.write_str("(*")?;
                        other.write_repr(f)?;
                        f.write_str(")")?;
                    }
                }
                if let Some(state) = &o.state {
                    f.write_str(".__setstate__(")?;
                    state.write_repr(f)?;
                    f.write_str(")")?;
                }
                Ok(())
            }
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.short_repr(usize::MAX))
    }
}

/// A `fmt::Write` that refuses once `left` characters are written.
struct Budget<'a> {
    out: &'a mut String,
    left: usize,
}

impl Write for Budget<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let n = s.chars().count();
        if n > self.left {
            self.out.extend(s.chars().take(self.left));
            self.left = 0;
            return Err(fmt::Error);
        }
        self.left -= n;
        self.out.push_str(s);
        Ok(())
    }
}

fn write_items(f: &mut Budget<'_>, open: &str, items: &[Value], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for (i, v) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        v.write_repr(f)?;
    }
    f.write_str(close)
}

fn write_bytes(f: &mut Budget<'_>, open: &str, b: &[u8], close: &str) -> fmt::Result {
    f.write_str(open)?;
    for &c in b {
        match c {
            b'\\' => f.write_str("\\\\")?,
            b'\'' => f.write_str("\\'")?,
            0x20..=0x7e => f.write_char(char::from(c))?,
            _ => write!(f, "\\x{c:02x}")?,
        }
    }
    f.write_str(close)
}
