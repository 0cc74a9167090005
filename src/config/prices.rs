//! What a model costs: settings `prices` first, else the table Ling ships for well-known models
//! (list prices in US dollars per million tokens, as their providers publish them). The table
//! matches a model id by its longest known prefix, so a dated id (`claude-sonnet-4-5-20250929`)
//! or a provider's spelling with a suffix finds its family; anything else has no price, and the
//! user gives one in `prices`.

use std::collections::BTreeMap;

use super::Price;

/// (model id prefix, input, output, cache read, cache write), dollars per million tokens.
/// Longer prefixes are found before shorter ones whatever their order here.
const SHIPPED: &[(&str, f64, f64, f64, f64)] = &[
    // Anthropic: a cache read is a tenth of the input price, a 5-minute cache write 1.25×.
    ("claude-opus-4-5", 5.0, 25.0, 0.5, 6.25),
    ("claude-opus-4", 15.0, 75.0, 1.5, 18.75),
    ("claude-3-opus", 15.0, 75.0, 1.5, 18.75),
    ("claude-sonnet-4", 3.0, 15.0, 0.3, 3.75),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.3, 3.75),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.3, 3.75),
    ("claude-haiku-4-5", 1.0, 5.0, 0.1, 1.25),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08, 1.0),
    ("claude-3-haiku", 0.25, 1.25, 0.03, 0.3),
    // OpenAI: cached input at its own price, nothing extra for writing the cache.
    ("gpt-5-nano", 0.05, 0.4, 0.005, 0.05),
    ("gpt-5-mini", 0.25, 2.0, 0.025, 0.25),
    ("gpt-5", 1.25, 10.0, 0.125, 1.25),
    ("gpt-4.1-nano", 0.1, 0.4, 0.025, 0.1),
    ("gpt-4.1-mini", 0.4, 1.6, 0.1, 0.4),
    ("gpt-4.1", 2.0, 8.0, 0.5, 2.0),
    ("gpt-4o-mini", 0.15, 0.6, 0.075, 0.15),
    ("gpt-4o", 2.5, 10.0, 1.25, 2.5),
    ("o4-mini", 1.1, 4.4, 0.275, 1.1),
    ("o3-mini", 1.1, 4.4, 0.55, 1.1),
    ("o3", 2.0, 8.0, 0.5, 2.0),
];

/// The price of `model`: its entry in `prices` (the settings'), else the shipped table's.
pub fn price_of(prices: &BTreeMap<String, Price>, model: &str) -> Option<Price> {
    prices.get(model).copied().or_else(|| shipped(model))
}

/// The shipped table's price of `model`, by its longest matching prefix (an `org/` prefix, as
/// OpenRouter spells ids, is ignored).
pub fn shipped(model: &str) -> Option<Price> {
    let bare = model.rsplit('/').next().unwrap_or(model);
    SHIPPED
        .iter()
        .filter(|(prefix, ..)| bare.starts_with(prefix))
        .max_by_key(|(prefix, ..)| prefix.len())
        .map(|&(_, input, output, read, write)| Price {
            input_per_m_tok: input,
            output_per_m_tok: output,
            cache_read_per_m_tok: Some(read),
            cache_write_per_m_tok: Some(write),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn the_longest_prefix_wins_and_settings_come_first() {
        let price = |m: &str| shipped(m).map(|p| p.input_per_m_tok);
        assert_eq!(price("gpt-4o-mini-2024-07-18"), Some(0.15));
        assert_eq!(price("gpt-4o-2024-08-06"), Some(2.5));
        assert_eq!(price("claude-sonnet-4-5-20250929"), Some(3.0));
        assert_eq!(price("claude-opus-4-5"), Some(5.0));
        assert_eq!(price("claude-opus-4-1"), Some(15.0));
        assert_eq!(price("openai/gpt-5-mini"), Some(0.25));
        assert_eq!(price("llama3"), None);
        let own = Price {
            input_per_m_tok: 9.0,
            ..Price::default()
        };
        let prices = BTreeMap::from([("gpt-4o".to_string(), own)]);
        assert_eq!(price_of(&prices, "gpt-4o"), Some(own));
        assert_eq!(price_of(&prices, "llama3"), None);
    }
}
