use super::*;

/// The steps of `lines`, the learning lines' (from the backlog) before the line that
/// taught the template, as the watch engine takes them.
fn steps(lines: &[String]) -> Vec<Step> {
    let mut t = Templates::default();
    let mut out = Vec::new();
    for l in lines {
        let Some(line) = crate::ingest::logs::line::normalise(l.as_bytes()) else {
            continue;
        };
        let said = learn(&line, &mut t);
        out.extend(t.backlog.drain(..).map(|b| b.1));
        if let Some((_, Said::Step(s))) = said {
            out.push(s);
        }
    }
    out
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
