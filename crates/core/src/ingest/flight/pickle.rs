//! A Python pickle of plain containers (protocols 2–5) decoded into a JSON value, for
//! Flight Recorder dumps (`torch.distributed` writes them with its own pickler). Only data
//! opcodes are run: dicts, lists, tuples, strings, bytes, ints, floats, booleans, None,
//! the memo, and the list builders of `torch.jit._pickle` (identities on their list). Any
//! other global, object construction or persistent id is refused: a pickle is untrusted
//! input, and a dump needs none. Memory is bounded by the input: each opcode makes at most
//! one value, and every length is checked against the bytes left before it is read.
//!
//! Hand-written because `serde-pickle` could not be fetched in this offline build; it is the
//! one function [`decode`], to be swapped for that crate.

use serde_json::{Map, Value};

/// How deep containers may nest when converted (a dump nests four levels).
const MAX_DEPTH: usize = 64;

/// A decoding failure: what and at which byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PickleError {
    /// Byte offset of the opcode.
    pub at: usize,
    /// What went wrong.
    pub what: String,
}

/// A value on the stack or in the memo: containers live in the arena so that the memo and
/// later `SETITEMS` / `APPENDS` see the same object.
#[derive(Debug, Clone)]
enum Item {
    Leaf(Value),
    /// Index into the arena.
    Node(usize),
    /// `(` on the stack.
    Mark,
    /// An allowed builder (`torch.jit._pickle.build_intlist`…): REDUCE returns its list.
    Builder,
}

#[derive(Debug)]
enum Node {
    List(Vec<Item>),
    Dict(Vec<(Item, Item)>),
}

struct Machine<'a> {
    b: &'a [u8],
    pos: usize,
    op_at: usize,
    stack: Vec<Item>,
    memo: Vec<Option<Item>>,
    arena: Vec<Node>,
}

/// Decodes a whole pickle into a JSON value (tuples become arrays, dict keys text).
pub(crate) fn decode(bytes: &[u8]) -> Result<Value, PickleError> {
    let mut m = Machine {
        b: bytes,
        pos: 0,
        op_at: 0,
        stack: Vec::new(),
        memo: Vec::new(),
        arena: Vec::new(),
    };
    let top = m.run()?;
    m.value(&top, 0)
}

impl Machine<'_> {
    fn err<T>(&self, what: impl Into<String>) -> Result<T, PickleError> {
        Err(PickleError {
            at: self.op_at,
            what: what.into(),
        })
    }

    fn take(&mut self, n: usize) -> Result<&[u8], PickleError> {
        if self.b.len() - self.pos < n {
            return self.err("truncated");
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn uint(&mut self, n: usize) -> Result<u64, PickleError> {
        let s = self.take(n)?;
        Ok(s.iter().rev().fold(0u64, |a, &x| (a << 8) | u64::from(x)))
    }

    fn len(&mut self, n: usize) -> Result<usize, PickleError> {
        let v = self.uint(n)?;
        usize::try_from(v)
            .ok()
            .filter(|&l| l <= self.b.len() - self.pos)
            .map_or_else(|| self.err("a length past the end"), Ok)
    }

    fn line(&mut self) -> Result<String, PickleError> {
        let rest = &self.b[self.pos..];
        let Some(n) = rest.iter().position(|&c| c == b'\n') else {
            return self.err("truncated");
        };
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }

    fn pop(&mut self) -> Result<Item, PickleError> {
        match self.stack.pop() {
            Some(Item::Mark) | None => self.err("stack underflow"),
            Some(x) => Ok(x),
        }
    }

    /// The items above the topmost mark, which is removed.
    fn pop_mark(&mut self) -> Result<Vec<Item>, PickleError> {
        let Some(k) = self.stack.iter().rposition(|x| matches!(x, Item::Mark)) else {
            return self.err("no mark");
        };
        let items = self.stack.split_off(k + 1);
        self.stack.pop();
        Ok(items)
    }

    fn push_node(&mut self, n: Node) {
        self.arena.push(n);
        self.stack.push(Item::Node(self.arena.len() - 1));
    }

    fn leaf(&mut self, v: Value) {
        self.stack.push(Item::Leaf(v));
    }

    fn text(&mut self, n: usize) -> Result<(), PickleError> {
        let s = String::from_utf8_lossy(self.take(n)?).into_owned();
        self.leaf(Value::String(s));
        Ok(())
    }

    fn int(&mut self, n: usize) -> Result<(), PickleError> {
        let s = self.take(n)?;
        if s.len() > 8 {
            return self.err("an integer wider than 64 bits");
        }
        let neg = s.last().is_some_and(|&x| x & 0x80 != 0);
        let mut v: u64 = if neg { u64::MAX } else { 0 };
        for (k, &x) in s.iter().enumerate() {
            v = (v & !(0xff << (8 * k))) | (u64::from(x) << (8 * k));
        }
        self.leaf(Value::from(v as i64));
        Ok(())
    }

    /// The container on top of the stack, for SETITEM(S) and APPEND(S).
    fn target(&self, below: usize) -> Result<usize, PickleError> {
        let k = self.stack.len().checked_sub(below + 1);
        match k.and_then(|k| self.stack.get(k)) {
            Some(Item::Node(n)) => Ok(*n),
            _ => self.err("no container to add to"),
        }
    }

    fn set_items(&mut self, items: Vec<Item>) -> Result<(), PickleError> {
        if items.len() % 2 != 0 {
            return self.err("a key without a value");
        }
        let n = self.target(0)?;
        let mut it = items.into_iter();
        while let (Some(k), Some(v)) = (it.next(), it.next()) {
            match &mut self.arena[n] {
                Node::Dict(d) => d.push((k, v)),
                Node::List(_) => return self.err("items set on a list"),
            }
        }
        Ok(())
    }

    fn append(&mut self, items: Vec<Item>) -> Result<(), PickleError> {
        let n = self.target(0)?;
        match &mut self.arena[n] {
            Node::List(l) => l.extend(items),
            Node::Dict(_) => return self.err("append to a dict"),
        }
        Ok(())
    }

    fn put(&mut self, k: usize) -> Result<(), PickleError> {
        let Some(top) = self.stack.last().cloned() else {
            return self.err("memo of an empty stack");
        };
        if k > self.b.len() {
            return self.err("a memo index past the input");
        }
        if self.memo.len() <= k {
            self.memo.resize(k + 1, None);
        }
        self.memo[k] = Some(top);
        Ok(())
    }

    fn get(&mut self, k: usize) -> Result<(), PickleError> {
        match self.memo.get(k).cloned().flatten() {
            Some(x) => {
                self.stack.push(x);
                Ok(())
            }
            None => self.err(format!("memo {k} unset")),
        }
    }

    fn global(&mut self, module: &str, name: &str) -> Result<(), PickleError> {
        let builders = [
            "build_intlist",
            "build_doublelist",
            "build_boollist",
            "build_tensorlist",
            "build_genericlist",
            "restore_type_tag",
        ];
        if module == "torch.jit._pickle" && builders.contains(&name) {
            self.stack.push(Item::Builder);
            return Ok(());
        }
        self.err(format!(
            "refused: the pickle calls {module}.{name} (a Flight Recorder dump holds plain data)"
        ))
    }

    fn reduce(&mut self) -> Result<(), PickleError> {
        let args = self.pop()?;
        let f = self.pop()?;
        if !matches!(f, Item::Builder) {
            return self.err("refused: a call of something that is not a list builder");
        }
        // The builders take (list,) or (list, type): the list is the value.
        let Item::Node(n) = args else {
            return self.err("a builder without arguments");
        };
        let first = match &self.arena[n] {
            Node::List(l) => l.first().cloned(),
            Node::Dict(_) => None,
        };
        match first {
            Some(x) => {
                self.stack.push(x);
                Ok(())
            }
            None => self.err("a builder without arguments"),
        }
    }

    fn tuple(&mut self, n: usize) -> Result<(), PickleError> {
        if self.stack.len() < n {
            return self.err("stack underflow");
        }
        let items = self.stack.split_off(self.stack.len() - n);
        if items.iter().any(|x| matches!(x, Item::Mark)) {
            return self.err("stack underflow");
        }
        self.push_node(Node::List(items));
        Ok(())
    }

    fn run(&mut self) -> Result<Item, PickleError> {
        loop {
            self.op_at = self.pos;
            let op = self.take(1)?[0];
            if op == b'.' {
                return self.pop();
            }
            let done = self.scalar(op)? || self.container(op)? || self.memo_or_call(op)?;
            if !done {
                return self.err(format!("refused: opcode 0x{op:02x}"));
            }
        }
    }

    /// Framing, constants, numbers and text; `false`: not one of those.
    fn scalar(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            0x80 => {
                self.take(1)?;
            }
            0x95 => {
                self.take(8)?;
            }
            b'N' => self.leaf(Value::Null),
            0x88 => self.leaf(Value::Bool(true)),
            0x89 => self.leaf(Value::Bool(false)),
            b'J' => self.int(4)?,
            b'K' => {
                let v = self.uint(1)?;
                self.leaf(Value::from(v));
            }
            b'M' => {
                let v = self.uint(2)?;
                self.leaf(Value::from(v));
            }
            0x8a => {
                let n = self.len(1)?;
                self.int(n)?;
            }
            0x8b => {
                let n = self.len(4)?;
                self.int(n)?;
            }
            b'I' | b'L' => self.text_int()?,
            b'G' => {
                let s = self.take(8)?;
                let f = f64::from_be_bytes(s.try_into().unwrap_or([0; 8]));
                self.leaf(serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number));
            }
            b'X' | b'T' | b'B' => {
                let n = self.len(4)?;
                self.text(n)?;
            }
            0x8c | b'U' | b'C' => {
                let n = self.len(1)?;
                self.text(n)?;
            }
            0x8d | 0x8e => {
                let n = self.len(8)?;
                self.text(n)?;
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Protocol 0's `I`/`L`: a decimal line (`I01`/`I00`: True/False).
    fn text_int(&mut self) -> Result<(), PickleError> {
        let l = self.line()?;
        let t = l.trim_end_matches('L');
        let v = match t {
            "00" => Value::Bool(false),
            "01" => Value::Bool(true),
            _ => match t.parse::<i64>() {
                Ok(v) => Value::from(v),
                Err(_) => return self.err("a bad integer"),
            },
        };
        self.leaf(v);
        Ok(())
    }

    /// Dicts, lists, tuples, marks; `false`: not one of those.
    fn container(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'}' => self.push_node(Node::Dict(Vec::new())),
            b']' | b')' => self.push_node(Node::List(Vec::new())),
            b'(' => self.stack.push(Item::Mark),
            b'0' => {
                self.pop()?;
            }
            b'1' => {
                self.pop_mark()?;
            }
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![k, v])?;
            }
            b'u' => {
                let items = self.pop_mark()?;
                self.set_items(items)?;
            }
            b'a' => {
                let v = self.pop()?;
                self.append(vec![v])?;
            }
            b'e' => {
                let items = self.pop_mark()?;
                self.append(items)?;
            }
            b't' | b'l' => {
                let items = self.pop_mark()?;
                self.push_node(Node::List(items));
            }
            b'd' => {
                let items = self.pop_mark()?;
                self.push_node(Node::Dict(Vec::new()));
                self.set_items(items)?;
            }
            0x85..=0x87 => self.tuple(usize::from(op - 0x84))?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The memo, and the only calls allowed (torch's list builders); `false`: neither.
    fn memo_or_call(&mut self, op: u8) -> Result<bool, PickleError> {
        match op {
            b'q' => {
                let k = self.uint(1)? as usize;
                self.put(k)?;
            }
            b'r' => {
                let k = self.uint(4)? as usize;
                self.put(k)?;
            }
            0x94 => {
                let k = self.memo.len();
                self.put(k)?;
            }
            b'h' => {
                let k = self.uint(1)? as usize;
                self.get(k)?;
            }
            b'j' => {
                let k = self.uint(4)? as usize;
                self.get(k)?;
            }
            b'c' => {
                let (module, name) = (self.line()?, self.line()?);
                self.global(&module, &name)?;
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                match (module, name) {
                    (Item::Leaf(Value::String(m)), Item::Leaf(Value::String(n))) => {
                        self.global(&m, &n)?
                    }
                    _ => return self.err("a global that is not named"),
                }
            }
            b'R' => self.reduce()?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An item as JSON (containers by value; nesting past [`MAX_DEPTH`], or a container
    /// holding itself, is an error).
    fn value(&self, x: &Item, depth: usize) -> Result<Value, PickleError> {
        if depth > MAX_DEPTH {
            return self.err("containers nested too deep");
        }
        match x {
            Item::Leaf(v) => Ok(v.clone()),
            Item::Mark | Item::Builder => self.err("a mark or a builder left as a value"),
            Item::Node(n) => match &self.arena[*n] {
                Node::List(l) => l
                    .iter()
                    .map(|i| self.value(i, depth + 1))
                    .collect::<Result<Vec<_>, _>>()
                    .map(Value::Array),
                Node::Dict(d) => {
                    let mut m = Map::new();
                    for (k, v) in d {
                        let key = match self.value(k, depth + 1)? {
                            Value::String(s) => s,
                            other => other.to_string(),
                        };
                        m.insert(key, self.value(v, depth + 1)?);
                    }
                    Ok(Value::Object(m))
                }
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Each pickle below is Python 3's `pickle.dumps(value, protocol=N)`, its bytes
    // written out.

    #[test]
    fn plain_containers_decode() {
        // pickle.dumps({'a': [1, -2, 300, 2**40, 1.5, None, True, 'x'], 'b': ('t', 7)}, 2)
        let p = b"\x80\x02}q\x00(X\x01\x00\x00\x00aq\x01]q\x02(K\x01J\xfe\xff\xff\xffM,\x01\x8a\x06\x00\x00\x00\x00\x00\x01G?\xf8\x00\x00\x00\x00\x00\x00N\x88X\x01\x00\x00\x00xq\x03eX\x01\x00\x00\x00bq\x04X\x01\x00\x00\x00tq\x05K\x07\x86q\x06u.";
        assert_eq!(
            decode(p).unwrap(),
            json!({"a": [1, -2, 300, 1u64 << 40, 1.5, null, true, "x"], "b": ["t", 7]})
        );
    }

    #[test]
    fn the_memo_shares_containers_filled_after_they_were_memoized() {
        // x = []; {'k': x, 'j': x} with x filled after both keys hold it, by hand:
        // } MEMOIZE ( 'k' ] MEMOIZE 'j' GET1 SETITEMS, GET1 5 APPEND, POP, STOP. Python's
        // pickle.loads gives {'k': [5], 'j': [5]}: one list, filled once.
        let p = b"\x80\x04}\x94(\x8c\x01k]\x94\x8c\x01jh\x01uh\x01K\x05a0.";
        assert_eq!(decode(p).unwrap(), json!({"k": [5], "j": [5]}));
    }

    #[test]
    fn code_and_broken_input_are_refused_with_their_byte() {
        // pickle.dumps(os.system) style: a global call.
        let e = decode(b"\x80\x02cos\nsystem\nq\x00.").unwrap_err();
        assert_eq!(e.at, 2);
        assert!(e.what.contains("os.system"), "{e:?}");
        // A length past the end, truncation, a stray mark.
        assert_eq!(decode(b"\x80\x02X\xff\xff\x00\x00ab").unwrap_err().at, 2);
        assert_eq!(decode(b"\x80\x02}").unwrap_err().what, "truncated");
        assert!(decode(b"\x80\x02(.").is_err());
        assert!(decode(b"").is_err());
        // torch's list builders are identities on their list.
        let p = b"\x80\x02ctorch.jit._pickle\nbuild_intlist\n(K\x01K\x02l\x85R.";
        assert_eq!(decode(p).unwrap(), json!([1, 2]));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// A real dump with bytes overwritten, cut anywhere: a value or an error at a byte
        /// of the input, never a panic.
        #[test]
        fn mutated_dumps_decode_or_fail_at_a_byte(
            edits in proptest::collection::vec((0usize..4096, proptest::prelude::any::<u8>()), 0..8),
            cut in 0usize..4096,
        ) {
            let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/flight/hang4/nccl_trace_rank_1");
            let mut b = std::fs::read(path).unwrap();
            for (at, x) in edits {
                let n = b.len();
                b[at % n] = x;
            }
            b.truncate(cut.max(1));
            if let Err(e) = decode(&b) {
                proptest::prop_assert!(e.at <= b.len());
            }
        }
    }

    #[test]
    fn self_containing_lists_stop_at_the_depth_limit() {
        // l = []; l.append(l): ] MEMOIZE h0 a.
        let p = b"\x80\x04]\x94h\x00a.";
        assert!(decode(p).unwrap_err().what.contains("deep"));
    }
}
