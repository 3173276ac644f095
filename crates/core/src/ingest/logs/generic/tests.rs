use super::*;
use family::{Joined, Member};

/// The steps of `lines`, the learning lines' (from the backlog) before the line that
/// taught the template, as the watch engine takes them.
fn steps(lines: &[String]) -> Vec<Step> {
    steps_and_family(lines).0
}

/// [`steps`], and the family of templates that read them.
fn steps_and_family(lines: &[String]) -> (Vec<Step>, Vec<Member>) {
    let mut t = Templates::default();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        t.line = i as u64 + 1;
        let Some(line) = crate::ingest::logs::line::normalise(l.as_bytes()) else {
            continue;
        };
        let said = learn(&line, &mut t);
        out.extend(t.backlog.drain(..).map(|b| b.1));
        if let Some((_, Said::Step(s))) = said {
            out.push(s);
        }
    }
    (out, t.family())
}

#[test]
fn a_plain_print_loop_is_learned_with_its_rate() {
    let lines: Vec<String> = (1..=8)
        .map(|i| {
            format!(
                "Batch {} Loss: 2.{i}45, Speed: 123{i}.5 samples/sec",
                i * 100
            )
        })
        .collect();
    let s = steps(&lines);
    // The first three teach the template, and are read once it is learned.
    assert_eq!(s.len(), 8);
    assert_eq!(s[0].step, Some(100));
    assert_eq!(s[4].step, Some(500));
    assert_eq!(s[4].time_ns, None);
    assert_eq!(s[4].metrics, [("samples_per_s", 1235.5)]);
}

#[test]
fn maxtext_seconds_is_a_per_step_time_and_a_cumulative_timer_is_cumulative() {
    let lines: Vec<String> = [1.5, 1.4, 1.6, 1.5, 3.2, 1.5]
        .iter()
        .enumerate()
        .map(|(i, s)| format!("completed step: {i}, seconds: {s}, TFLOP/s/device: 123.4, Tokens/s/device: 5678, loss: 8.1"))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 6);
    assert_eq!((s[4].step, s[4].time_ns), (Some(4), Some(3_200_000_000)));
    assert_eq!(s[4].provenance, Provenance::PerStep);
    let lines: Vec<String> = (1..=6)
        .map(|i| format!("it {i} elapsed_ms {} loss 3.{i}", i * 250))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 6);
    assert_eq!(s[4].cumulative_ns, Some(1_250_000_000));
    assert_eq!(s[4].time_ns, None);
}

#[test]
fn counters_and_prose_are_not_step_lines() {
    let mut lines: Vec<String> = (1..=8)
        .map(|i| format!("Downloading shard {i}/64"))
        .collect();
    lines.extend((1..=8).map(|i| format!("epoch {} loss {}", i % 3, i)));
    assert!(steps(&lines).is_empty());
}

#[test]
fn numbered_code_lines_need_more_than_three_lines_and_signs_and_separators_keep_a_template() {
    // Three numbered lines of a code listing that say `step`: too little for a template
    // without a time or a rate.
    let lines: Vec<String> = (1..=3)
        .map(|i| format!("{}. wait on step {i}, then compute update of {i}", i + 3))
        .collect();
    assert!(steps(&lines).is_empty());
    // `mfu -100.00%` (a resumed run's first line) and `tps: 6,697` are the same template
    // as `mfu 13.70%` and `tps: 149`.
    let lines: Vec<String> = [(1000, "-100.00", "149"), (1010, "13.70", "6,697")]
        .into_iter()
        .chain([(1020, "13.71", "6,562"), (1030, "13.69", "6,563")])
        .map(|(i, mfu, tps)| format!("iter {i}: time 9.8ms, mfu {mfu}%, tps: {tps}"))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 4);
    assert_eq!(s[1].metrics, [("tokens_per_s", 6697.0)]);
}

#[test]
fn a_smoothed_time_is_a_running_average() {
    // maskrcnn-benchmark: `time: median (global average)`.
    let lines: Vec<String> = (1..=4)
        .map(|i| {
            format!(
                "eta: 0:45:00  iter: {}  time: 0.06{i} (0.0676)  loss: 1.5",
                i * 50
            )
        })
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 4);
    assert_eq!(s[0].provenance, Provenance::RunningAverage);
    assert_eq!(s[0].time_ns, Some(61_000_000));
}

/// The lines `f` makes of steps `from..to`.
fn run(from: u64, to: u64, f: impl Fn(u64) -> String) -> Vec<String> {
    (from..to).map(f).collect()
}

#[test]
fn a_field_appended_part_way_is_read_through_the_same_slot_names() {
    let mut lines = run(1, 6, |i| format!("step {i} | loss 2.{i} | dt 12{i}.5ms"));
    lines.extend(run(6, 20, |i| {
        format!(
            "step {i} | loss 2.{i} | dt 12{}.5ms | eta {}.0m",
            i % 10,
            20 - i
        )
    }));
    let (s, family) = steps_and_family(&lines);
    assert_eq!(s.len(), 19);
    assert_eq!((s[5].step, s[5].time_ns), (Some(6), Some(126_500_000)));
    assert_eq!(family.len(), 2);
    assert_eq!((family[0].lines, family[0].records), ((1, 5), 5));
    assert_eq!((family[1].lines, family[1].records), ((6, 19), 14));
    assert_eq!(family[1].joined, Some(Joined::Adopted));
    // The field dropped again, and the loss with it: the same slots still read.
    let mut lines = run(1, 6, |i| format!("step {i} | loss 2.{i} | dt 12{i}.5ms"));
    lines.extend(run(6, 9, |i| format!("step {i} | dt 13{i}.5ms")));
    let s = steps(&lines);
    assert_eq!(s.len(), 8);
    assert_eq!(s[7].time_ns, Some(138_500_000));
}

#[test]
fn a_renamed_time_is_learned_again_and_its_steps_continue_the_run() {
    // `dt` becomes `time`: no slot of that name, so the new line is learned on its own from
    // three lines, then joins (its lines after the family's, its steps continuing), and its
    // three learning lines are read then.
    let mut lines = run(1, 6, |i| format!("step {i} | loss 2.{i} | dt 12{i}.5ms"));
    lines.extend(run(6, 12, |i| {
        format!("step {i} | loss 2.{i} | time 13{}.5ms", i % 10)
    }));
    let (s, family) = steps_and_family(&lines);
    let numbers: Vec<Option<u64>> = s.iter().map(|x| x.step).collect();
    assert_eq!(numbers, (1..12).map(Some).collect::<Vec<_>>());
    assert_eq!(family[1].joined, Some(Joined::Succeeded));
    assert_eq!(family[1].records, 6);
}

#[test]
fn another_phase_of_the_same_shape_is_not_a_step_line() {
    // Evaluation lines between the training lines, the same slots: a first word of their
    // own, so no family, and no steps of theirs.
    let mut lines = Vec::new();
    for i in 1..12 {
        lines.push(format!("train step {i} | loss 2.{i} | dt 12{}.5ms", i % 10));
        if i % 3 == 0 {
            lines.push(format!("eval step {i} | loss 3.{i} | dt 90{i}.5ms"));
        }
    }
    let (s, family) = steps_and_family(&lines);
    assert_eq!(s.len(), 11);
    assert!(s.iter().all(|x| x.time_ns < Some(200_000_000)));
    assert_eq!(family.len(), 1);
}

#[test]
fn an_unnamed_counter_before_the_step_is_its_epoch() {
    // GNMT's `TRAIN [epoch][iter/total]`: the epoch is the `[#]` before the step, and with
    // the total printed the step is epoch × total + iter.
    let lines: Vec<String> = (0..2)
        .flat_map(|e| (0..4).map(move |i| format!("TRAIN [{e}][{}/40] Time 0.{}1", i * 10, i + 1)))
        .collect();
    let s = steps(&lines);
    let numbers: Vec<(Option<u64>, Option<u64>)> = s.iter().map(|x| (x.epoch, x.step)).collect();
    assert_eq!(numbers[3], (Some(0), Some(30)));
    assert_eq!(numbers[4], (Some(1), Some(40)));
    assert_eq!(numbers[7], (Some(1), Some(70)));
}

#[test]
fn a_rate_word_a_number_follows_names_that_number_not_the_one_before() {
    // `loss 80.000 samples/sec 1500.0`: `samples/sec` names 1500.0; the loss is no rate.
    let lines: Vec<String> = (1..=6)
        .map(|i| format!("epoch 0 batch {i} loss 8{i}.000 samples/sec 150{i}.0 took 0.33{i} s"))
        .collect();
    let s = steps(&lines);
    assert_eq!(s.len(), 6);
    assert_eq!(s[2].metrics, vec![("samples_per_s", 1503.0)]);
    assert_eq!(s[2].time_ns, Some(333_000_000));
}

#[test]
fn a_long_line_with_a_field_appended_joins_at_once() {
    // Past the 120 characters `--explain` shows: the whole templates are compared.
    let long = |i: u64| {
        format!(
            "iteration {i}/ 9999 | consumed samples: {} | elapsed time per iteration (ms): 34{i}.5 | learning rate: 8.6E-06 | global batch size: 128 | lm loss: 1.8E+00 | grad norm: 1.4 |",
            i * 128
        )
    };
    let mut lines = run(1, 6, long);
    lines.extend(run(6, 12, |i| format!("{} eta: {}.0m |", long(i), 20 - i)));
    let (s, family) = steps_and_family(&lines);
    assert_eq!(s.len(), 11);
    assert_eq!(family.len(), 2);
    assert_eq!(family[1].joined, Some(Joined::Adopted));
}
