use super::*;

fn safe(input: &[u8]) -> Vec<u8> {
    DisplayFilter::filter_all(DisplayOptions::default(), input)
}

fn with_title(input: &[u8]) -> Vec<u8> {
    DisplayFilter::filter_all(DisplayOptions { allow_title: true }, input)
}

#[test]
fn text_colours_and_cursor_movement_pass_unchanged() {
    let kept: &[u8] =
        b"plain \xe2\x82\xac\xe2\x9c\x93 text\r\n\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[m\x1b[4:3m\
          \x1b[2A\x1b[10;20H\x1b[K\x1b[2J\x1b[3G\x1b7\x1b8\x1bM\tend\x08\x07";
    assert_eq!(safe(kept), kept);
}

#[test]
fn what_acts_on_the_users_terminal_is_dropped() {
    let cases: &[&[u8]] = &[
        b"\x1b]52;c;ZWNobyBwd25lZA==\x07",      // clipboard write (BEL)
        b"\x1b]52;c;ZWNobyBwd25lZA==\x1b\\",    // clipboard write (ST)
        b"\x1b]52;c;?\x07",                     // clipboard read
        b"\x1b]0;title\x07",                    // title (not allowed by default)
        b"\x1b]2;title\x1b\\",                  // title
        b"\x1b]10;?\x07",                       // colour query
        b"\x1b]4;1;rgb:ff/00/00\x07",           // palette change
        b"\x1b]8;;https://example.invalid\x07", // hyperlink
        b"\x1b]1337;File=name=eA==:AAAA\x07",   // iTerm file transfer
        b"\x1bP$qm\x1b\\",                      // DECRQSS
        b"\x1bP+q544e\x1b\\",                   // XTGETTCAP
        b"\x1b_Gf=100;AAAA\x1b\\",              // APC (kitty graphics)
        b"\x1b^private\x1b\\",                  // PM
        b"\x1bXsos\x1b\\",                      // SOS
        b"\x1b[c",                              // DA1
        b"\x1b[>c",                             // DA2
        b"\x1b[=c",                             // DA3
        b"\x1b[6n",                             // CPR
        b"\x1b[5n",                             // DSR
        b"\x1b[?6n",                            // DECXCPR
        b"\x1b[>0q",                            // XTVERSION
        b"\x1b[?2026$p",                        // DECRQM
        b"\x1b[18t",                            // window size report
        b"\x1b[21t",                            // title report
        b"\x1b[8;100;100t",                     // window resize
        b"\x1b[?1049h",                         // alternate screen
        b"\x1b[?1000h",                         // mouse reporting (the terminal sends input)
        b"\x1b[?25l",                           // hidden cursor
        b"\x1b[4h",                             // insert mode
        b"\x1b[5;10r",                          // scroll margins
        b"\x1b[3J",                             // erase the scrollback
        b"\x1b[65535b",                         // REP
        b"\x1b[2 q",                            // cursor style
        b"\x1bc",                               // full reset
        b"\x1bZ",                               // DECID (answers like DA)
        b"\x1b(0",                              // line-drawing charset
        b"\x1b#8",                              // DECALN
        b"\x1b=",                               // keypad mode
        b"\x05",                                // ENQ (answerback)
        b"\x0e\x0f",                            // SO / SI
        b"\xc2\x9b6n",                          // C1 CSI as UTF-8: dropped, `6n` is text
        b"\x9b6n",                              // raw C1 CSI: U+FFFD, `6n` is text
    ];
    for case in cases {
        let out = safe(case);
        assert!(
            !out.contains(&0x1b),
            "{:?} gave {:?}",
            String::from_utf8_lossy(case),
            out
        );
        assert!(
            out.is_empty() || out == b"6n" || out == "\u{FFFD}6n".as_bytes(),
            "{:?} gave {:?}",
            String::from_utf8_lossy(case),
            String::from_utf8_lossy(&out)
        );
    }
}

#[test]
fn text_around_a_dropped_sequence_stays() {
    assert_eq!(safe(b"a\x1b]52;c;eA==\x07b\x1bP$qm\x1b\\c"), b"abc");
}

#[test]
fn titles_pass_when_allowed_with_printable_text_only() {
    assert_eq!(
        with_title(b"\x1b]0;build \xe2\x9c\x93\x07"),
        b"\x1b]0;build \xe2\x9c\x93\x07"
    );
    assert_eq!(with_title(b"\x1b]2;t\x1b\\x"), b"\x1b]2;t\x07x");
    assert_eq!(with_title(b"\x1b]52;c;eA==\x07"), b"");
    assert_eq!(with_title(b"\x1b]2;a\xc2\x9bb\x07"), b"");
    let long = [b"\x1b]2;".as_slice(), &[b'x'; MAX_TITLE + 1], b"\x07"].concat();
    assert_eq!(with_title(&long), b"");
}

#[test]
fn an_unterminated_sequence_is_dropped_and_invalid_utf8_replaced() {
    assert_eq!(safe(b"ok\x1b]52;c;eA=="), b"ok");
    assert_eq!(safe(b"ok\x1b[1;3"), b"ok");
    assert_eq!(safe(b"a\xffb\xe2\x82"), "a\u{FFFD}b\u{FFFD}".as_bytes());
    // CAN cancels a sequence; ESC inside a CSI starts a new one.
    assert_eq!(safe(b"\x1b[31\x18m"), b"m");
    assert_eq!(safe(b"\x1b[31\x1b[32m"), b"\x1b[32m");
    let long = [b"\x1b[".as_slice(), &[b'1'; MAX_CSI + 1], b"m!"].concat();
    assert_eq!(safe(&long), b"!");
}

/// Deterministic pseudo-random bytes, biased towards the bytes that matter here.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    const ALPHABET: &[u8] =
        b"\x1b\x1b\x1b[]P_^X\\\x07\x18;:0123?>$m c\xc2\x9b\x9c\xe2\x82\xac\x05\n\r a";
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if x.is_multiple_of(5) {
                (x >> 8) as u8
            } else {
                ALPHABET[(x >> 16) as usize % ALPHABET.len()]
            }
        })
        .collect()
}

#[test]
fn any_split_of_the_stream_gives_the_same_output() {
    for seed in 0..200 {
        let input = noise(seed, 300);
        for options in [
            DisplayOptions::default(),
            DisplayOptions { allow_title: true },
        ] {
            let mut whole = Vec::new();
            DisplayFilter::new(options).filter(&input, &mut whole);
            for cut in [1, 2, 3, 7, 64] {
                let mut f = DisplayFilter::new(options);
                let mut parts = Vec::new();
                for chunk in input.chunks(cut) {
                    f.filter(chunk, &mut parts);
                }
                assert_eq!(parts, whole, "seed {seed}, chunks of {cut}");
            }
        }
    }
}

#[test]
fn the_output_is_made_of_safe_units_only() {
    for seed in 0..500 {
        let input = noise(seed, 400);
        for options in [
            DisplayOptions::default(),
            DisplayOptions { allow_title: true },
        ] {
            let out = DisplayFilter::filter_all(options, &input);
            // Valid UTF-8 without C1 controls, and filtering it again changes nothing (every
            // unit in it is one the filter keeps whole).
            let text = std::str::from_utf8(&out).expect("valid UTF-8");
            assert!(!text.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c)));
            assert_eq!(DisplayFilter::filter_all(options, &out), out, "seed {seed}");
            // Every ESC starts a kept unit: CSI with digits only, a title, or 7 8 D E M.
            for (i, _) in out.iter().enumerate().filter(|(_, &b)| b == 0x1b) {
                let next = out[i + 1];
                assert!(
                    b"[78DEM".contains(&next) || (options.allow_title && next == b']'),
                    "seed {seed}: {:?}",
                    String::from_utf8_lossy(&out[i..])
                );
            }
        }
    }
}
