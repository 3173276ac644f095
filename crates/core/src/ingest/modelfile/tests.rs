use super::*;
use crate::ingest::demo::{DemoSpec, Scenario};
use crate::ingest::{LoadOptions, demo_inputs, read_one};
use crate::model::EventIx;

/// The drafts of rank `r` of a small demo job.
fn demo_drafts(scenario: Scenario, r: usize) -> Vec<RankDraft> {
    let spec = DemoSpec {
        ranks: 2,
        steps: 3,
        scenario,
        ..DemoSpec::default()
    };
    read_one(&demo_inputs(spec)[r], &LoadOptions::default()).unwrap()
}

fn identity() -> Identity {
    Identity {
        path: "/x/rank-0.json".into(),
        size: 7,
        mtime: (1, 2),
        ends: 3,
    }
}

fn reading() -> Reading {
    Reading::new(false, JsonEvents::Fast, &RoleTable::embedded())
}

fn file(drafts: &[RankDraft]) -> Vec<u8> {
    let e = encode(FileKind::Summary, identity(), reading(), drafts).unwrap();
    let mut v = Vec::new();
    e.write_to(&mut v).unwrap();
    assert_eq!(v.len() as u64, e.bytes());
    v
}

#[test]
fn a_model_reads_back_as_it_was_written() {
    for scenario in [Scenario::Default, Scenario::PipelineStraggler] {
        let drafts = demo_drafts(scenario, 1);
        let bytes = file(&drafts);
        let (h, back) = decode(&bytes).unwrap();
        assert_eq!(h.kind, FileKind::Summary);
        assert_eq!(h.source, identity());
        assert_eq!(h.reading, reading());
        assert_eq!(h.version, VERSION);
        // Written again, the same bytes: nothing was lost or changed on the way.
        assert_eq!(file(&back), bytes);
        let (a, b) = (&drafts[0].rank.events, &back[0].rank.events);
        assert!(a.len() > 100);
        assert_eq!(
            (&a.start, &a.dur, &a.kind, &a.link),
            (&b.start, &b.dur, &b.kind, &b.link)
        );
        assert_eq!(a.raw, b.raw);
        assert_eq!(drafts[0].strings.len(), back[0].strings.len());
    }
}

#[test]
fn a_file_not_whole_or_not_ours_is_refused_with_why() {
    let bytes = file(&demo_drafts(Scenario::Default, 0));
    let err = |b: &[u8]| decode(b).err().unwrap();
    assert_eq!(err(b"{\"traceEvents\": []}"), "not a stepscope model file");
    assert_eq!(err(&bytes[..18]), "cut short in its header");
    let cut = err(&bytes[..bytes.len() - 1]);
    assert!(cut.starts_with("cut short: "), "{cut}");
    let mut flipped = bytes.clone();
    let k = flipped.len() - 10;
    flipped[k] ^= 0x40;
    assert_eq!(
        err(&flipped),
        "its checksum does not match (a corrupt file)"
    );
    // Version 1 is the header's first byte (a postcard varint): a file of version 9.
    let mut other = bytes.clone();
    other[MAGIC.len() + 4] = 9;
    assert_eq!(
        err(&other),
        format!(
            "a model file of layout version 9; this stepscope reads version {VERSION} (write it again)"
        )
    );
}

#[test]
fn a_payload_whose_indices_do_not_hold_is_refused() {
    let good = demo_drafts(Scenario::Default, 0);
    let refused = |f: &dyn Fn(&mut RankDraft)| {
        let mut drafts = demo_drafts(Scenario::Default, 0);
        f(&mut drafts[0]);
        let payload = postcard::to_stdvec(&drafts).unwrap();
        decode_payload(&payload).err().expect("refused")
    };
    assert!(decode_payload(&postcard::to_stdvec(&good).unwrap()).is_ok());
    let names = good[0].strings.len() as u32;
    let n = good[0].rank.events.len() as u32;
    let e = refused(&|d| d.rank.events.name[5] = names);
    assert_eq!(
        e,
        format!("rank 0 of the file: an event names string {names} of {names}")
    );
    let e = refused(&|d| d.rank.events.link[3] = EventIx(n));
    assert_eq!(
        e,
        format!("rank 0 of the file: a launch link refers to event {n} of {n}")
    );
    let e = refused(&|d| d.rank.events.step[0] = 999);
    assert!(e.contains("an event is in step 999 of"), "{e}");
    let e = refused(&|d| d.rank.lanes[1].first += 1);
    assert!(
        e.contains("lane 1 does not follow the lane before it"),
        "{e}"
    );
    let e = refused(&|d| d.rank.lanes[0].count += 1);
    assert!(
        e.contains("lane 0's events are not its own in start order"),
        "{e}"
    );
    let e = refused(&|d| d.rank.events.start.swap(0, 1));
    assert!(
        e.contains("lane 0's events are not its own in start order"),
        "{e}"
    );
    let e = refused(&|d| d.rank.collectives[0].event = EventIx(n + 7));
    assert!(e.contains("a collective refers to event"), "{e}");
    let e = refused(&|d| d.rank.pre_window.end = Some(i64::MAX));
    assert!(
        e.contains("the work before the trace window ends at"),
        "{e}"
    );
    let e = refused(&|d| d.rank.pre_window.busy_ns = -1);
    assert!(e.contains("busy -1 ns: out of range"), "{e}");
    let e = refused(&|d| d.rank.stepping_lane = Some(4000));
    assert!(e.contains("the stepping lane is not a lane"), "{e}");
    // A kind byte no kind has.
    let mut drafts = demo_drafts(Scenario::Default, 0);
    drafts[0].rank.events.kind.truncate(0);
    drafts[0].rank.events.kind.push(crate::model::Kind::Other);
    let e = decode_payload(&postcard::to_stdvec(&drafts).unwrap())
        .err()
        .unwrap();
    assert!(e.contains("the event columns differ in length"), "{e}");
}

#[test]
fn a_name_table_with_a_name_twice_is_refused() {
    let t = crate::model::Interner::from_strings(vec!["a", "b", "a"], 0);
    assert!(t.is_none());
    let t = crate::model::Interner::from_strings(vec!["a", "b"], 1).unwrap();
    assert_eq!((t.resolve(1), t.cut_count()), ("b", 1));
}
