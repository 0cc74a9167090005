//! Lists of names and descriptions that go into every request (the skills in the `skill`
//! tool's description, the agent types in `task`'s), held to a byte budget so that a hundred
//! skills cost a few hundred tokens: descriptions are shortened evenly until the list fits,
//! then left out, then the names that do not fit are counted and left to the tool's `list`.

/// `- name: description` lines within `budget` bytes; `more` is appended (with the count of
/// the names left out) when some do not fit.
pub fn within_budget(entries: &[(&str, &str)], budget: usize, more: &str) -> String {
    let lines = |cut: Option<usize>| -> String {
        let mut out = String::new();
        for (name, description) in entries {
            let description = one_line(description);
            match cut {
                Some(0) => out.push_str(&format!("- {name}\n")),
                Some(max) if description.chars().count() > max => {
                    let short: String = description.chars().take(max).collect();
                    out.push_str(&format!("- {name}: {}…\n", short.trim_end()));
                }
                _ => out.push_str(&format!("- {name}: {description}\n")),
            }
        }
        out
    };
    let full = lines(None);
    if full.len() <= budget {
        return full;
    }
    // The longest cut of every description that fits (descriptions shorter than 12
    // characters say too little to be worth their bytes).
    let longest = entries
        .iter()
        .map(|(_, d)| one_line(d).chars().count())
        .max()
        .unwrap_or(0);
    let (mut low, mut high) = (12, longest);
    let mut best = None;
    while low <= high {
        let mid = (low + high) / 2;
        if lines(Some(mid)).len() <= budget {
            best = Some(mid);
            low = mid + 1;
        } else {
            high = mid.saturating_sub(1);
            if mid == 0 {
                break;
            }
        }
    }
    if let Some(cut) = best {
        return lines(Some(cut));
    }
    // Names only, as many as fit with the note of how many are left.
    let mut out = String::new();
    for (shown, (name, _)) in entries.iter().enumerate() {
        let note = format!("(+{} more; {more})\n", entries.len() - shown);
        let line = format!("{name}, ");
        if out.len() + line.len() + note.len() > budget {
            out.push_str(&note);
            return out;
        }
        out.push_str(&line);
    }
    out.trim_end_matches(", ").to_string() + "\n"
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_list_is_whole_and_a_long_one_is_cut_to_the_budget() {
        let few = [("pdf", "Fill PDF forms"), ("xlsx", "Edit\nspreadsheets")];
        assert_eq!(
            within_budget(&few, 1000, "list"),
            "- pdf: Fill PDF forms\n- xlsx: Edit spreadsheets\n"
        );
        let names: Vec<String> = (0..100).map(|i| format!("skill-{i:03}")).collect();
        let description = "Does a very particular thing when the user asks for it ".repeat(3);
        let many: Vec<(&str, &str)> = names
            .iter()
            .map(|n| (n.as_str(), description.as_str()))
            .collect();
        let listed = within_budget(&many, 1000, "call skill with name \"list\"");
        assert!(listed.len() <= 1000, "{}", listed.len());
        assert!(listed.starts_with("skill-000, skill-001"), "{listed}");
        assert!(listed.contains("more; call skill"), "{listed}");
        let some = &many[..10];
        let listed = within_budget(some, 600, "x");
        assert!(
            listed.len() <= 600 && listed.contains("- skill-009: Does a"),
            "{listed}"
        );
    }
}
