//! A minimal, safe reader for the pickles `preprocess.py` writes (protocols
//! 2 to 5): dicts, lists, tuples, sets, str, bytes, int, float, bool, None,
//! the memo, FRAME and the MARK-based opcodes.
//!
//! Nothing is ever imported or called. GLOBAL / STACK_GLOBAL give a name,
//! and REDUCE, NEWOBJ(_EX), INST, OBJ and BUILD give an opaque [`Object`]
//! holding that name and its arguments, so a numpy array arrives as
//! `numpy.core.multiarray._reconstruct(...)` with its dtype and bytes inside,
//! undecoded. What cannot be honoured without code or outside help
//! (persistent ids, the extension registry, out-of-band buffers, protocol 0
//! text opcodes) is an error that names the opcode and its offset.

mod error;
mod machine;
mod opcode;
mod value;

pub use error::PickleError;
pub use machine::{parse_pickle, unfold_limit, MAX_DEPTH, UNFOLD_SLACK};
pub use value::{Call, Object, Value};

#[cfg(test)]
mod tests {
    use super::*;

    /// PROTO 4 + `body` + STOP.
    fn p4(body: &[u8]) -> Vec<u8> {
        let mut v = vec![0x80, 4];
        v.extend_from_slice(body);
        v.push(b'.');
        v
    }

    #[test]
    fn memoized_list_is_seen_filled() {
        // l = []; d = {"a": l, "b": l} with l memoized empty, filled, then fetched
        let pkl = p4(b"}\x94(\x8c\x01a]\x94(K\x01K\x02e\x8c\x01bh\x01u");
        let v = parse_pickle(&pkl).unwrap();
        let list = Value::List(vec![Value::Int(1), Value::Int(2)]);
        assert_eq!(v.get("a"), Some(&list));
        assert_eq!(v.get("b"), Some(&list));
    }

    #[test]
    fn longs_and_floats() {
        // LONG1 of 0 bytes, -1, 2**63 (9 bytes); BINFLOAT 1.5
        let pkl = p4(b"(\x8a\x00\x8a\x01\xff\x8a\x09\x00\x00\x00\x00\x00\x00\x00\x80\x00G?\xf8\x00\x00\x00\x00\x00\x00t");
        let v = parse_pickle(&pkl).unwrap();
        assert_eq!(
            v,
            Value::Tuple(vec![
                Value::Int(0),
                Value::Int(-1),
                Value::BigInt(vec![0, 0, 0, 0, 0, 0, 0, 0x80, 0]),
                Value::Float(1.5),
            ])
        );
    }

    #[test]
    fn globals_stay_opaque() {
        // builtins.print("x") via REDUCE, then BUILD with None
        let pkl = p4(b"\x8c\x08builtins\x8c\x05print\x93\x8c\x01x\x85RNb");
        let Value::Object(o) = parse_pickle(&pkl).unwrap() else {
            panic!("not an object")
        };
        assert_eq!(o.global_name().as_deref(), Some("builtins.print"));
        assert_eq!(o.args, Value::Tuple(vec![Value::Str("x".into())]));
        assert_eq!(o.state, Some(Value::None));
        assert_eq!(o.call, Call::Reduce);
    }

    #[test]
    fn errors_name_opcode_and_offset() {
        let e = parse_pickle(&p4(b"\xff")).unwrap_err();
        assert!(
            matches!(
                e,
                PickleError::UnknownOpcode {
                    byte: 0xff,
                    offset: 2
                }
            ),
            "{e}"
        );
        assert_eq!(e.to_string(), "unknown opcode byte 0xff at offset 2");
        let e = parse_pickle(&p4(b"Q")).unwrap_err();
        assert!(
            e.to_string().contains("BINPERSID (0x51) at offset 2"),
            "{e}"
        );
        let e = parse_pickle(&p4(b"I1\n")).unwrap_err();
        assert!(e.to_string().contains("INT (0x49) at offset 2"), "{e}");
        let e = parse_pickle(&p4(b"h\x07")).unwrap_err();
        assert!(
            e.to_string().contains("BINGET at offset 2: memo entry 7"),
            "{e}"
        );
        let e = parse_pickle(&p4(b"N(N\x86")).unwrap_err();
        assert!(e.to_string().contains("TUPLE2 at offset 5"), "{e}");
        let e = parse_pickle(&p4(b"K\x01a")).unwrap_err();
        assert!(e.to_string().contains("APPEND at offset 4"), "{e}");
        let e = parse_pickle(b"\x80\x06N.").unwrap_err();
        assert!(
            matches!(e, PickleError::Protocol { protocol: 6, .. }),
            "{e}"
        );
        let e = parse_pickle(b"{}").unwrap_err();
        assert!(matches!(e, PickleError::NotPickle { first: b'{' }), "{e}");
        let e = parse_pickle(b"\x80\x04\x8c\x05ab").unwrap_err();
        assert!(matches!(e, PickleError::Truncated { offset: 6, .. }), "{e}");
        let e = parse_pickle(b"\x80\x04N").unwrap_err();
        assert!(e.to_string().contains("no STOP"), "{e}");
        // a length field far past the end allocates nothing
        let e = parse_pickle(b"\x80\x04\x8e\xff\xff\xff\xff\xff\xff\xff\xff").unwrap_err();
        assert!(matches!(e, PickleError::Truncated { .. }), "{e}");
    }

    #[test]
    fn refuses_deep_and_exploding_values() {
        let mut body = Vec::new();
        body.extend(std::iter::repeat_n(b']', MAX_DEPTH + 5));
        body.extend(std::iter::repeat_n(b'a', MAX_DEPTH + 4));
        let e = parse_pickle(&p4(&body)).unwrap_err();
        assert!(matches!(e, PickleError::TooDeep { .. }), "{e}");

        // x = (b, b) 20 times over, b 64 KiB: 64 GiB through the memo
        let mut body = vec![b'B', 0, 0, 1, 0];
        body.extend(std::iter::repeat_n(b'x', 1 << 16));
        body.push(0x94);
        for i in 0..20u8 {
            body.extend_from_slice(&[b'h', i, b'h', i, 0x86, 0x94]);
        }
        let e = parse_pickle(&p4(&body)).unwrap_err();
        assert!(matches!(e, PickleError::TooLarge { .. }), "{e}");
    }

    #[test]
    fn short_repr_is_cut() {
        let v = Value::Tuple(vec![Value::Int(1), Value::Bytes(vec![0; 100])]);
        assert_eq!(v.short_repr(12), "(1, b'\\x00\\x…");
        assert_eq!(Value::Tuple(vec![Value::Int(1)]).to_string(), "(1,)");
    }
}
