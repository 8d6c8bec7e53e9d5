//! A setting that takes one of a few words (`--task multiclass`, `solver = "bcd"`): an enum
//! whose words are declared once, with its variants, by `choice_enum!`. The flag, the config
//! key, session.json (serde), a `ParamSpec`'s choice list (`NAMES`) and the workbench's cycling
//! (`ALL`, `next`) all use those words, so they cannot drift apart.

use crate::error::ErrorKind;
use crate::util::text::nearest;
use crate::{OvkError, Result};

/// An enum of named values; implemented by `choice_enum!`.
pub trait Choice: Copy + Eq + Sized + 'static {
    /// The config key the value is given under (`task`, `solver`), for messages.
    const KEY: &'static str;
    /// Every value, in the order help text and menus list them.
    const ALL: &'static [Self];
    /// The word of each value of `ALL`, in the same order (a `ParamKind::Choice` list).
    const NAMES: &'static [&'static str];

    /// The one spelling of the value.
    fn name(self) -> &'static str;

    /// The value spelled `text` (surrounding blanks and ASCII case ignored). Anything else is an
    /// input error (`ErrorKind::UnknownChoice`) that lists the words and names the closest.
    fn parse(text: &str) -> Result<Self> {
        let t = text.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.name().eq_ignore_ascii_case(t))
            .ok_or_else(|| unknown(Self::KEY, t, Self::NAMES))
    }

    /// The value after this one in `ALL`, the last wrapping to the first (the workbench cycles).
    fn next(self) -> Self {
        let i = Self::ALL.iter().position(|&v| v == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }
}

/// "`key`: 'x' is not one of a, b, c (did you mean 'a'?)".
pub fn unknown(key: &str, text: &str, names: &[&str]) -> OvkError {
    let hint = nearest(text, names)
        .map(|n| format!(" (did you mean '{n}'?)"))
        .unwrap_or_default();
    OvkError::input_as(
        ErrorKind::UnknownChoice,
        format!("{key}: '{text}' is not one of {}{hint}", names.join(", ")),
    )
}

/// Declares a `Choice` enum: each variant with its one word, and the config key.
///
/// ```ignore
/// choice_enum! {
///     /// How B is found at one λ.
///     pub enum Solver: "solver" {
///         /// L-BFGS.
///         Qn = "qn",
///         Bcd = "bcd",
///     }
/// }
/// ```
/// gives the enum (`Debug, Clone, Copy, PartialEq, Eq, Hash`), a `const fn name`, `Choice`,
/// `Display`, `FromStr`, and serde as the word (read through `Choice::parse`).
macro_rules! choice_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $Name:ident: $key:literal {
            $( $(#[$vmeta:meta])* $Variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        $vis enum $Name {
            $( $(#[$vmeta])* $Variant ),+
        }

        impl $Name {
            /// The one spelling of the value (usable in a `const`).
            pub const fn name(self) -> &'static str {
                match self {
                    $( $Name::$Variant => $word ),+
                }
            }
        }

        impl $crate::util::choice::Choice for $Name {
            const KEY: &'static str = $key;
            const ALL: &'static [Self] = &[ $( $Name::$Variant ),+ ];
            const NAMES: &'static [&'static str] = &[ $( $word ),+ ];
            fn name(self) -> &'static str {
                $Name::name(self)
            }
        }

        impl ::std::fmt::Display for $Name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $Name {
            type Err = $crate::OvkError;
            fn from_str(s: &str) -> $crate::Result<Self> {
                <$Name as $crate::util::choice::Choice>::parse(s)
            }
        }

        impl ::serde::Serialize for $Name {
            fn serialize<S: ::serde::Serializer>(
                &self,
                s: S,
            ) -> ::std::result::Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $Name {
            fn deserialize<D: ::serde::Deserializer<'de>>(
                d: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(d)?;
                <$Name as $crate::util::choice::Choice>::parse(&text)
                    .map_err(::serde::de::Error::custom)
            }
        }
    };
}
pub(crate) use choice_enum;

#[cfg(test)]
mod tests {
    use super::*;

    choice_enum! {
        /// A test enum.
        enum Colour: "colour" {
            Red = "red",
            /// The second.
            DarkBlue = "dark-blue",
        }
    }

    #[test]
    fn names_parse_back_and_serde_uses_them() {
        for &c in Colour::ALL {
            assert_eq!(Colour::parse(c.name()).unwrap(), c);
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
            assert_eq!(serde_json::from_str::<Colour>(&json).unwrap(), c);
        }
        assert_eq!(Colour::NAMES, &["red", "dark-blue"]);
        assert_eq!(Colour::parse(" Dark-Blue ").unwrap(), Colour::DarkBlue);
        assert_eq!(Colour::Red.next(), Colour::DarkBlue);
        assert_eq!(Colour::DarkBlue.next(), Colour::Red);
    }

    #[test]
    fn a_typo_names_the_closest_word() {
        let e = Colour::parse("dark-blu").unwrap_err();
        assert_eq!(e.kind(), ErrorKind::UnknownChoice);
        assert_eq!(
            e.to_string(),
            "colour: 'dark-blu' is not one of red, dark-blue (did you mean 'dark-blue'?)"
        );
        let e = serde_json::from_str::<Colour>("\"rde\"").unwrap_err();
        assert!(e.to_string().contains("did you mean 'red'"), "{e}");
    }
}
