//! preprocessed_files.pkl: the committed fixture (written by the unchanged
//! preprocess.py), the same structure from numpy 1 and 2 at protocols 2-5,
//! plain-type pickles from CPython, and broken files (pickles/make_pickles.py).

mod common;

use std::path::PathBuf;

use common::{case_list, fixture_dir, read_json, usizes};
use mlperf_kits19::pickle::{parse_pickle, PickleError, Value};
use mlperf_kits19::preprocessed_list::{
    read_preprocessed_list, PreprocessedList, PreprocessedListError,
};

fn pickles(name: &str) -> PathBuf {
    fixture_dir().join("pickles").join(name)
}

fn shapes(list: &PreprocessedList) -> Vec<(&str, [usize; 4])> {
    list.cases
        .iter()
        .map(|c| (c.name.as_str(), c.image_shape))
        .collect()
}

fn raw(name: &str) -> Value {
    parse_pickle(&std::fs::read(pickles(name)).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn global(v: &Value) -> String {
    match v {
        Value::Object(o) => o.global_name().unwrap_or_default(),
        other => panic!("not an object: {}", other.short_repr(80)),
    }
}

#[test]
fn committed_fixture_matches_records() {
    let path = fixture_dir().join("preprocessed_data/preprocessed_files.pkl");
    let list = read_preprocessed_list(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(list.path, path);
    assert_eq!(
        shapes(&list),
        [
            ("case_00003", [1, 192, 128, 192]),
            ("case_00000", [1, 128, 192, 128]),
            ("case_00400", [1, 128, 128, 128]),
        ]
    );
    // the order is file_list's (= inference_cases.json), not the cases dict's
    assert_eq!(list.names(), case_list());
    let rec = read_json("records/preprocessed.json");
    for c in &list.cases {
        let want = usizes(&rec["cases"][&c.name]["aux_image_shape"]);
        assert_eq!(c.image_shape.to_vec(), want, "{}", c.name);
    }
    assert_eq!(list.cases[1].volume_shape(), [128, 192, 128]);
}

#[test]
fn numpy_1_and_2_at_every_protocol_agree() {
    let want = [
        ("case_00003", [1, 192, 128, 192]),
        ("case_00000", [1, 128, 192, 128]),
        ("case_00400", [1, 128, 128, 128]),
        ("case_00185", [1, 320, 384, 448]),
    ];
    for name in [
        "np1_p2.pkl",
        "np1_p3.pkl",
        "np1_p4.pkl",
        "np1_p5.pkl",
        "np2_p4.pkl",
        "np2_p5.pkl",
        "zoom_tuple.pkl",
        "zoom_list.pkl",
    ] {
        let list = read_preprocessed_list(pickles(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(shapes(&list), want, "{name}");
    }
    // how the arrays arrive, undecoded
    let affine = |name| {
        raw(name)
            .get("cases")
            .unwrap()
            .get("case_00000")
            .unwrap()
            .clone()
    };
    let reconstruct = [
        ("np1_p2.pkl", "numpy.core.multiarray._reconstruct"),
        ("np1_p4.pkl", "numpy.core.multiarray._reconstruct"),
        ("np2_p4.pkl", "numpy._core.multiarray._reconstruct"),
        ("np1_p5.pkl", "numpy.core.numeric._frombuffer"),
        ("np2_p5.pkl", "numpy._core.numeric._frombuffer"),
    ];
    for (name, callable) in reconstruct {
        let case = affine(name);
        let a = case.get("original_affine").unwrap();
        assert_eq!(global(a), callable, "{name}");
        if let Value::Object(o) = a {
            if name.ends_with("p5.pkl") {
                // protocol 5: the 16 float64s in-band as a bytearray, then dtype, shape, order
                let args = o.args.as_sequence().unwrap();
                assert!(matches!(&args[0], Value::ByteArray(b) if b.len() == 128));
                assert_eq!(global(&args[1]), "numpy.dtype");
                assert!(o.state.is_none());
            } else {
                // ndarray.__setstate__((version, shape, dtype, is_fortran, data))
                let state = o.state.as_ref().unwrap().as_sequence().unwrap();
                assert_eq!(
                    state[1],
                    Value::Tuple(vec![Value::Int(4), Value::Int(4)]),
                    "{name}"
                );
                assert_eq!(global(&state[2]), "numpy.dtype");
            }
        }
    }
    let zoom = |name| affine(name).get("zoom_factor").unwrap().clone();
    let z = [
        Value::Float(1.875),
        Value::Float(0.651_041_666_666_666_7),
        Value::Float(0.651_041_666_666_666_7),
    ];
    assert_eq!(zoom("zoom_tuple.pkl"), Value::Tuple(z.to_vec()));
    assert_eq!(zoom("zoom_list.pkl"), Value::List(z.to_vec()));
}

#[test]
fn kitchen_sink_matches_cpython() {
    for p in 2..=5 {
        let name = format!("kitchen_sink_p{p}.pkl");
        let v = raw(&name);
        let get = |k: &str| v.get(k).unwrap_or_else(|| panic!("{name}: {k}"));
        assert_eq!(get("none"), &Value::None);
        assert_eq!(get("true"), &Value::Bool(true));
        assert_eq!(get("false"), &Value::Bool(false));
        let mut ints: Vec<Value> = [
            0,
            1,
            255,
            256,
            65535,
            65536,
            -1,
            -256,
            (1 << 31) - 1,
            -(1 << 31),
            1 << 31,
            i64::MAX,
            i64::MIN,
        ]
        .into_iter()
        .map(Value::Int)
        .collect();
        ints.push(Value::BigInt(vec![0, 0, 0, 0, 0, 0, 0, 0x80, 0]));
        let mut two_100 = vec![0; 12];
        two_100.push(0x10);
        ints.push(Value::BigInt(two_100));
        assert_eq!(get("ints"), &Value::List(ints), "{name}");
        let floats: Vec<u64> = get("floats")
            .as_sequence()
            .unwrap()
            .iter()
            .map(|f| match f {
                Value::Float(x) => x.to_bits(),
                other => panic!("{other}"),
            })
            .collect();
        let want: Vec<u64> = [0.0, -0.0, 1.5, 1e300, -2.5e-300f64]
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(floats, want, "{name}");
        let strs = ["", "case_00003", "é✓", &"x".repeat(300)].map(|s| Value::Str(s.into()));
        assert_eq!(get("strs"), &Value::List(strs.to_vec()), "{name}");
        let bytes = get("bytes").as_sequence().unwrap();
        let bytearray = get("bytearray");
        let (set, frozenset) = (get("set"), get("frozenset"));
        if p == 2 {
            // bytes become _codecs.encode(str, "latin1") calls
            assert_eq!(global(&bytes[0]), "__builtin__.bytes");
            assert_eq!(global(&bytes[1]), "_codecs.encode");
        } else {
            let want = [vec![], vec![0, 0xff], vec![b'y'; 300]].map(Value::Bytes);
            assert_eq!(bytes, want, "{name}");
        }
        if p == 5 {
            assert_eq!(bytearray, &Value::ByteArray(b"ab".to_vec()));
        } else {
            assert!(global(bytearray).ends_with(".bytearray"), "{name}");
        }
        if p >= 4 {
            assert_eq!(set, &Value::Set(vec![Value::Int(3)]));
            assert_eq!(frozenset, &Value::FrozenSet(vec![Value::Int(4)]));
        } else {
            assert!(global(set).ends_with(".set"), "{name}");
            assert!(global(frozenset).ends_with(".frozenset"), "{name}");
        }
        let tuples = (0..5)
            .map(|n| Value::Tuple((1..=n).map(Value::Int).collect()))
            .collect();
        assert_eq!(get("tuples"), &Value::List(tuples));
        let shared = Value::List(vec![Value::Str("shared".into())]);
        assert_eq!(get("shared"), &Value::List(vec![shared.clone(), shared]));
        let c = get("nested").get("a").unwrap().get("b").unwrap().get("c");
        assert_eq!(c, Some(&Value::List(vec![Value::Int(1)])));
        let Value::Object(od) = get("ordered") else {
            panic!("{name}: OrderedDict")
        };
        assert_eq!(od.global_name().as_deref(), Some("collections.OrderedDict"));
        assert_eq!(od.entries, [(Value::Str("x".into()), Value::Int(1))]);
        let Value::Object(cx) = get("complex") else {
            panic!("{name}: complex")
        };
        assert!(cx.global_name().unwrap().ends_with(".complex"));
        assert_eq!(
            cx.args,
            Value::Tuple(vec![Value::Float(1.0), Value::Float(2.0)])
        );
        let d = v.as_dict().unwrap();
        let key = Value::Tuple(vec![Value::Int(1), Value::Str("k".into())]);
        assert!(d.contains(&(key, Value::Str("tuple key".into()))), "{name}");
        assert!(
            d.contains(&(Value::Int(7), Value::Str("int key".into()))),
            "{name}"
        );
    }
}

fn err(name: &str) -> (PreprocessedListError, String) {
    let e = read_preprocessed_list(pickles(name)).expect_err(name);
    let msg = e.to_string();
    assert!(msg.contains(name), "{msg}");
    (e, msg)
}

#[test]
fn broken_structure_says_what_is_wrong() {
    let (e, msg) = err("missing_file_list.pkl");
    assert!(
        matches!(
            e,
            PreprocessedListError::MissingKey {
                key: "file_list",
                ..
            }
        ),
        "{msg}"
    );
    assert!(
        msg.ends_with("the top-level dict has no \"file_list\" key"),
        "{msg}"
    );
    let (e, _) = err("missing_cases.pkl");
    assert!(matches!(
        e,
        PreprocessedListError::MissingKey { key: "cases", .. }
    ));
    let (e, msg) = err("missing_case_entry.pkl");
    assert!(
        matches!(&e, PreprocessedListError::MissingCase { index: 1, case, .. } if case == "case_00000"),
        "{msg}"
    );
    let (e, msg) = err("missing_image_shape.pkl");
    assert!(matches!(
        e,
        PreprocessedListError::MissingKey {
            key: "image_shape",
            ..
        }
    ));
    assert!(
        msg.ends_with("cases[\"case_00400\"] has no \"image_shape\" key"),
        "{msg}"
    );
    let (e, msg) = err("duplicate_case.pkl");
    assert!(
        matches!(&e, PreprocessedListError::Duplicate { first: 1, second: 4, case, .. } if case == "case_00000"),
        "{msg}"
    );
    let (e, msg) = err("file_list_str.pkl");
    assert!(matches!(e, PreprocessedListError::WrongType { .. }));
    assert!(
        msg.contains("file_list is a str \"case_00003\", expected a list"),
        "{msg}"
    );
    let (_, msg) = err("top_list.pkl");
    assert!(msg.contains("the pickled object is a list [{"), "{msg}");
}

#[test]
fn bad_image_shapes_name_the_case() {
    for (name, why) in [
        ("shape_3d.pkl", "needs 4 elements"),
        ("shape_channel_2.pkl", "first (channel) element must be 1"),
        ("shape_zero.pkl", "not positive"),
        ("shape_negative.pkl", "not positive"),
        ("shape_float.pkl", "not an int"),
        ("shape_ndarray.pkl", "not a tuple"),
        ("shape_numpy_ints.pkl", "not an int"),
    ] {
        let (e, msg) = err(name);
        assert!(
            matches!(&e, PreprocessedListError::BadShape { case, .. } if case == "case_00000"),
            "{msg}"
        );
        assert!(
            msg.contains("cases[\"case_00000\"][\"image_shape\"] is "),
            "{msg}"
        );
        assert!(msg.contains(why), "{msg}");
    }
    let (_, msg) = err("shape_numpy_ints.pkl");
    assert!(
        msg.contains("numpy.core.multiarray.scalar(numpy.dtype("),
        "{msg}"
    );
}

#[test]
fn unreadable_files() {
    let (e, msg) = err("truncated.pkl");
    assert!(
        matches!(
            e,
            PreprocessedListError::Pickle {
                source: PickleError::Truncated { .. },
                ..
            }
        ),
        "{msg}"
    );
    let missing = fixture_dir().join("pickles/no_such.pkl");
    let msg = read_preprocessed_list(&missing).unwrap_err().to_string();
    assert!(msg.contains("no_such.pkl: no such file"), "{msg}");
    assert!(
        msg.contains("beside the case_XXXXX.pkl files and nifti/"),
        "{msg}"
    );
    let json = fixture_dir().join("meta/inference_cases.json");
    let e = read_preprocessed_list(&json).unwrap_err();
    assert!(
        matches!(
            e,
            PreprocessedListError::Pickle {
                source: PickleError::NotPickle { first: b'[' },
                ..
            }
        ),
        "{e}"
    );
    let e = read_preprocessed_list(fixture_dir().join("pickles")).unwrap_err();
    assert!(matches!(e, PreprocessedListError::Io { .. }), "{e}");
}

#[test]
fn damaged_bytes_give_errors_not_panics() {
    for name in ["np2_p5.pkl", "kitchen_sink_p2.pkl"] {
        let data = std::fs::read(pickles(name)).unwrap();
        for n in 0..data.len() {
            assert!(parse_pickle(&data[..n]).is_err(), "{name} cut at {n}");
        }
        let mut copy = data.clone();
        for i in 0..data.len() {
            for b in [0xff, data[i] ^ 0x01] {
                copy[i] = b;
                // Ok or Err are both fine; only a panic or a hang would fail
                let _ = parse_pickle(&copy);
            }
            copy[i] = data[i];
        }
    }
}
