//! The private macro that gives a hand-declared enum its wire spelling.
//!
//! Every protocol enum (hook points, decisions, reasons, …) is written out by hand with its docs;
//! this macro only adds the boring, identical parts: `ALL`, `as_str`, `parse`, `Display`,
//! `Serialize` and the crate-private `WireEnum` impl that strict decoding and the schema use. It
//! never declares a type.

/// Implements the wire spelling of an enum: `wire_enum!(Type, "SchemaName", { Variant => "wire" })`.
///
/// An optional trailing `later { Variant => "wire" }` group names values that have a wire
/// spelling but are not part of `ALL` (the v1 table): values a later protocol profile adds
/// (`Method::ToolCall`), so that `ALL`, the schema and everything else built from the v1 table
/// stay exactly v1's.
macro_rules! wire_enum {
    ($ty:ident, $name:literal, { $($variant:ident => $wire:literal),+ $(,)? }
        $(, later { $($later:ident => $later_wire:literal),+ $(,)? })? $(,)?) => {
        impl $ty {
            /// Every value, in the order of the spec's table.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// The value as it appears on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $wire,)+
                    $($($ty::$later => $later_wire,)+)?
                }
            }

            /// The value with this exact wire spelling (case-sensitive), if any.
            pub fn parse(wire: &str) -> Option<Self> {
                match wire {
                    $($wire => Some($ty::$variant),)+
                    $($($later_wire => Some($ty::$later),)+)?
                    _ => None,
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::serde::Serialize for $ty {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl crate::decode::WireEnum for $ty {
            const NAME: &'static str = $name;

            fn all() -> &'static [Self] {
                $ty::ALL
            }

            fn wire(self) -> &'static str {
                self.as_str()
            }
        }
    };
}
