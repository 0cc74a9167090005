//! Enums that users spell: in a settings file, on the command line, in Claude Code's or Codex's
//! words. [`spelled_enum!`] declares one from a single table of variants, each with its own name
//! and the other tools' spellings of it, and gives it everything that reads or shows those names:
//! `serde` (an unknown name is an error that lists the valid ones, at the file's line and
//! column), the JSON Schema's `enum` (every spelling, so an editor accepts what Ling accepts),
//! clap's [`clap::ValueEnum`] (the flag takes the same spellings, and `--help` shows each
//! variant's doc line) and `Display`/`FromStr`. Nothing matches a name by hand elsewhere.

/// Declares `enum NAME ("what it is") { Variant = "name" | "alias" ..., }`; doc comments on the
/// variants become their `--help` lines.
macro_rules! spelled_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident ($what:literal) {
            $(
                $(#[doc = $doc:literal])*
                $variant:ident = $canonical:literal $(| $alias:literal)*
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $name {
            $( $(#[doc = $doc])* $variant, )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// Ling's own name of this variant.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $canonical,)+
                }
            }

            /// Every spelling that means this variant, Ling's first.
            pub fn spellings(self) -> &'static [&'static str] {
                match self {
                    $(Self::$variant => &[$canonical $(, $alias)*],)+
                }
            }

            /// The variant any of its spellings names.
            pub fn parse(name: &str) -> Option<Self> {
                Self::ALL
                    .iter()
                    .copied()
                    .find(|variant| variant.spellings().contains(&name))
            }

            /// The valid names for an error message: `a, b (also B), c`.
            pub fn expected() -> String {
                $crate::config::spelled::expected(Self::ALL.iter().map(|v| v.spellings()))
            }

            fn help(self) -> &'static str {
                match self {
                    $(Self::$variant => concat!($($doc, "\n"),*),)+
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $name {
            type Err = String;

            fn from_str(name: &str) -> Result<Self, String> {
                Self::parse(name).ok_or_else(|| {
                    format!("unknown {} `{name}`; expected one of {}", $what, Self::expected())
                })
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                name.parse().map_err(serde::de::Error::custom)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl schemars::JsonSchema for $name {
            fn inline_schema() -> bool {
                true
            }

            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($name).into()
            }

            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let names: Vec<&str> =
                    Self::ALL.iter().flat_map(|v| v.spellings().iter().copied()).collect();
                schemars::json_schema!({ "type": "string", "enum": names })
            }
        }

        impl clap::ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                Self::ALL
            }

            fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                let help = $crate::config::spelled::one_line(self.help());
                let value = clap::builder::PossibleValue::new(self.as_str())
                    .aliases(self.spellings()[1..].iter().copied());
                Some(if help.is_empty() { value } else { value.help(help) })
            }
        }
    };
}

pub(crate) use spelled_enum;

/// `a, b (also B), c` from each variant's spellings.
pub fn expected<'a>(variants: impl Iterator<Item = &'a [&'a str]>) -> String {
    variants
        .map(|spellings| match spellings {
            [name] => (*name).to_string(),
            [name, aliases @ ..] => format!("{name} (also {})", aliases.join(", ")),
            [] => String::new(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A doc comment's lines as one line of help.
pub fn one_line(doc: &str) -> String {
    doc.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use schemars::JsonSchema;

    spelled_enum! {
        /// A test enum.
        pub enum Colour ("colour") {
            /// The red one
            /// (two lines).
            Red = "red" | "Red" | "rouge",
            Green = "green",
        }
    }

    #[test]
    fn every_spelling_parses_and_the_canonical_one_is_shown() {
        assert_eq!(Colour::parse("rouge"), Some(Colour::Red));
        assert_eq!("Red".parse::<Colour>(), Ok(Colour::Red));
        assert_eq!(Colour::Red.to_string(), "red");
        assert_eq!(
            "blue".parse::<Colour>(),
            Err("unknown colour `blue`; expected one of red (also Red, rouge), green".into())
        );
        let json: Result<Vec<Colour>, _> = serde_json::from_str(r#"["Red","green"]"#);
        assert_eq!(json.ok(), Some(vec![Colour::Red, Colour::Green]));
        let bad = serde_json::from_str::<Vec<Colour>>("[\n\"red\",\n  \"x\"]").unwrap_err();
        assert_eq!((bad.line(), bad.column()), (3, 6));
        assert!(bad.to_string().contains("expected one of red"), "{bad}");
    }

    #[test]
    fn the_schema_and_the_flag_take_the_same_spellings() {
        let mut generator = schemars::SchemaGenerator::default();
        assert_eq!(
            Colour::json_schema(&mut generator).to_value(),
            serde_json::json!({"type": "string", "enum": ["red", "Red", "rouge", "green"]})
        );
        use clap::ValueEnum;
        assert_eq!(
            <Colour as ValueEnum>::from_str("rouge", false),
            Ok(Colour::Red)
        );
        let red = Colour::Red.to_possible_value().unwrap();
        assert_eq!(red.get_name(), "red");
        assert_eq!(
            red.get_help().map(|h| h.to_string()).as_deref(),
            Some("The red one (two lines).")
        );
        assert!(
            Colour::Green
                .to_possible_value()
                .unwrap()
                .get_help()
                .is_none()
        );
    }
}
