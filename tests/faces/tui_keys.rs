//! Any keys and clicks, in any order, at any size: the browser never panics, every frame has
//! the terminal's size, and Esc always comes back towards the cluster.

use proptest::prelude::*;
use stepscope::session::{Session, Settings};
use stepscope::ui::browser::{Browser, Pane};
use stepscope::ui::shell::keymap::{Keymap, parse_key};
use stepscope::ui::shell::theme::Theme;
use stepscope::ui::shell::{Shell, snapshot};

type App = Shell<Browser>;

thread_local! {
    static APP: std::cell::RefCell<Option<App>> = const { std::cell::RefCell::new(None) };
}

/// Every key the default keymap binds, but quit.
fn bound_keys() -> Vec<stepscope::ui::shell::keymap::Key> {
    Keymap::default_map()
        .bindings
        .iter()
        .filter(|b| b.action.name() != "quit")
        .flat_map(|b| {
            b.keys
                .iter()
                .map(|k| parse_key(k).expect("the keymap parses"))
        })
        .collect()
}

#[derive(Debug, Clone)]
enum Input {
    Key(usize),
    Click(u16, u16),
}

fn input() -> impl Strategy<Value = Input> {
    prop_oneof![
        4 => (0usize..1000).prop_map(Input::Key),
        1 => (0u16..240, 0u16..70).prop_map(|(x, y)| Input::Click(x, y)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn any_keys_and_clicks_at_any_size(
        size in (40u16..240, 12u16..70),
        inputs in proptest::collection::vec(input(), 1..60),
    ) {
        let keys = bound_keys();
        APP.with(|cell| {
            let mut cell = cell.borrow_mut();
            let app = cell.get_or_insert_with(|| {
                let s = Session::open(&[], &Settings::default()).expect("the demo loads");
                stepscope::ui::headless(s, Keymap::default_map(), Theme::builtin("dark"), false, (120, 40))
            });
            app.ctx.size = size;
            app.ctx.help = false;
            app.screen.search.typing = false;
            for i in &inputs {
                match *i {
                    Input::Key(k) => {
                        app.key(keys[k % keys.len()]);
                    }
                    Input::Click(x, y) => {
                        let _ = snapshot::render(app);
                        app.click(x, y);
                    }
                }
                app.ctx.quit = false;
            }
            app.ctx.help = false;
            app.screen.search.typing = false;
            let text = snapshot::render(app);
            prop_assert_eq!(text.lines().count(), size.1 as usize);
            prop_assert!(text.lines().all(|l| l.chars().count() <= size.0 as usize));
            // Esc (enough of them) leaves every level, jump, range and group.
            for _ in 0..12 {
                app.key((ratatui::crossterm::event::KeyCode::Esc, ratatui::crossterm::event::KeyModifiers::NONE));
            }
            prop_assert_eq!(app.screen.nav.stack.len(), 1);
            // On the timeline, also its marked range (elsewhere it waits for the return).
            prop_assert!(app.screen.nav.pane != Pane::Timeline || app.screen.panes.timeline.view.mark.is_none());
            Ok(())
        })?;
    }
}
