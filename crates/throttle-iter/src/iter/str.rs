//! Parallel iterators over a string: `par_chars`, `par_split`, `par_lines`, ... (the module
//! `throttle::str`, rayon's `rayon::str`).
//!
//! A piece of a string is a byte range `[start, end)` of the whole string; its units are
//! bytes. A piece yields the chars that start in it, and the split family yields the parts that
//! follow the separators found in it (the piece that starts at byte 0 also yields the first
//! part), reading past its end to finish its last part. So any split of the bytes gives every
//! part exactly once, in order, and pieces never need to split on a char boundary.

use super::plumbing::engine::Pieces;
use super::plumbing::Folder;

/// What can separate the parts of a string for the `par_split` family and `par_matches`: a
/// `char`, a slice or array of `char`s (any of them), or a closure `Fn(char) -> bool`.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let parts: Vec<&str> = "a,b;c".par_split([',', ';']).collect();
/// assert_eq!(parts, ["a", "b", "c"]);
/// ```
pub trait Pattern: Sync + Send {
    /// True if `c` is a separator.
    fn is_match(&self, c: char) -> bool;
}

impl Pattern for char {
    fn is_match(&self, c: char) -> bool {
        *self == c
    }
}

impl Pattern for &[char] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> Pattern for [char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<const N: usize> Pattern for &[char; N] {
    fn is_match(&self, c: char) -> bool {
        self.contains(&c)
    }
}

impl<F: Fn(char) -> bool + Sync + Send> Pattern for F {
    fn is_match(&self, c: char) -> bool {
        self(c)
    }
}

/// The first char boundary at or after `i`.
fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while i < s.len() && !s.is_char_boundary(i) {
        i += 1;
    }
    i.min(s.len())
}

/// A byte range of a string, as a producer's state.
#[derive(Debug, Clone, Copy)]
struct Piece<'a> {
    s: &'a str,
    start: usize,
    end: usize,
}

impl<'a> Piece<'a> {
    fn whole(s: &'a str) -> Self {
        Piece {
            s,
            start: 0,
            end: s.len(),
        }
    }
    fn split_at(self, index: usize) -> (Self, Self) {
        let mid = self.start + index;
        (Piece { end: mid, ..self }, Piece { start: mid, ..self })
    }
    /// The chars that start in this piece.
    fn text(&self) -> &'a str {
        &self.s[ceil_boundary(self.s, self.start)..ceil_boundary(self.s, self.end)]
    }
}

/// Implements the producer methods shared by the string iterators (all hold `piece`).
macro_rules! str_producer {
    ($name:ident [$($g:tt)*] $item:ty, $seq:ty, |$me:ident| $into_seq:expr) => {
        impl<$($g)*> Pieces for $name<$($g)*> {
            type Item = $item;
            fn split_at(self, index: usize) -> (Self, Self) {
                let (l, r) = self.piece.split_at(index);
                ($name { piece: l }, $name { piece: r })
            }
            fn fold_with<F: Folder<$item>>($me, folder: F) -> F {
                let seq: $seq = $into_seq;
                folder.consume_iter(seq)
            }
        }

        units_iterator!(impl[$($g)*] $name<$($g)*> => $item, where [],
            units: |this| this.piece.end - this.piece.start);
    };
}

/// The chars of a string; from [`ParallelString::par_chars`].
#[derive(Debug, Clone)]
pub struct Chars<'a> {
    piece: Piece<'a>,
}

str_producer!(Chars['a] char, std::str::Chars<'a>, |self| self.piece.text().chars());

/// The chars of a string with their byte positions; from
/// [`ParallelString::par_char_indices`].
#[derive(Debug, Clone)]
pub struct CharIndices<'a> {
    piece: Piece<'a>,
}

/// The sequential iterator of a [`CharIndices`] leaf.
#[derive(Debug)]
pub(crate) struct CharIndicesSeq<'a> {
    iter: std::str::CharIndices<'a>,
    offset: usize,
}

impl Iterator for CharIndicesSeq<'_> {
    type Item = (usize, char);
    fn next(&mut self) -> Option<(usize, char)> {
        let (i, c) = self.iter.next()?;
        Some((i + self.offset, c))
    }
}

str_producer!(CharIndices['a] (usize, char), CharIndicesSeq<'a>, |self| CharIndicesSeq {
    offset: ceil_boundary(self.piece.s, self.piece.start),
    iter: self.piece.text().char_indices(),
});

/// The UTF-16 code units of a string; from [`ParallelString::par_encode_utf16`].
#[derive(Debug, Clone)]
pub struct EncodeUtf16<'a> {
    piece: Piece<'a>,
}

str_producer!(EncodeUtf16['a] u16, std::str::EncodeUtf16<'a>, |self| self
    .piece
    .text()
    .encode_utf16());

/// The bytes of a string (an exact-length iterator); from [`ParallelString::par_bytes`].
#[derive(Debug, Clone)]
pub struct Bytes<'a> {
    inner: super::Copied<super::slice::Iter<'a, u8>>,
}

delegate_impls!(Bytes['a] => super::Copied<super::slice::Iter<'a, u8>>, u8, []);

/// How a part of a split ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// `split`: every part, without its separator.
    Split,
    /// `split_terminator`: as `split`, but no empty last part.
    Terminator,
    /// `split_inclusive`: parts with their separator, no empty last part.
    Inclusive,
}

/// The sequential iterator of the split family: the parts that follow the separators of one
/// piece (and the first part, for the piece at byte 0).
#[derive(Debug)]
pub(crate) struct SplitSeq<'a, P> {
    s: &'a str,
    pat: P,
    kind: Kind,
    /// Where the next part starts, if this piece has one more.
    next: Option<usize>,
    /// This piece's end: separators at or after it belong to the next piece.
    end: usize,
}

impl<'a, P: Pattern> SplitSeq<'a, P> {
    fn new(piece: Piece<'a>, pat: P, kind: Kind) -> Self {
        let s = piece.s;
        // The first part belongs to the piece at byte 0 (the non-empty one, if a split made
        // an empty piece there too).
        let next = if piece.start == 0 && (piece.end > 0 || s.is_empty()) {
            Some(0)
        } else {
            let from = ceil_boundary(s, piece.start);
            Self::find(s, &pat, from)
                .filter(|&(q, _)| q < piece.end)
                .map(|(q, l)| q + l)
        };
        SplitSeq {
            s,
            pat,
            kind,
            next,
            end: piece.end,
        }
    }

    /// The first separator at or after `from` (a char boundary): its position and length.
    fn find(s: &str, pat: &P, from: usize) -> Option<(usize, usize)> {
        s[from..]
            .char_indices()
            .find(|&(_, c)| pat.is_match(c))
            .map(|(i, c)| (from + i, c.len_utf8()))
    }
}

impl<'a, P: Pattern> Iterator for SplitSeq<'a, P> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        loop {
            let start = self.next.take()?;
            match Self::find(self.s, &self.pat, start) {
                Some((q, l)) => {
                    if q < self.end {
                        self.next = Some(q + l);
                    }
                    let stop = if self.kind == Kind::Inclusive {
                        q + l
                    } else {
                        q
                    };
                    return Some(&self.s[start..stop]);
                }
                None => {
                    // The last part: empty only at the very end of the string.
                    if self.kind != Kind::Split && start == self.s.len() {
                        continue;
                    }
                    return Some(&self.s[start..]);
                }
            }
        }
    }
}

/// Generates a split-family iterator type.
macro_rules! split_type {
    ($(#[$m:meta])* $name:ident, $kind:expr) => {
        $(#[$m])*
        #[derive(Debug, Clone)]
        pub struct $name<'a, P> {
            piece: Piece<'a>,
            pat: P,
        }

        impl<'a, P: Pattern + Clone> Pieces for $name<'a, P> {
            type Item = &'a str;
            fn split_at(self, index: usize) -> (Self, Self) {
                let (l, r) = self.piece.split_at(index);
                ($name { piece: l, pat: self.pat.clone() }, $name { piece: r, pat: self.pat })
            }
            fn fold_with<F: Folder<&'a str>>(self, folder: F) -> F {
                folder.consume_iter(SplitSeq::new(self.piece, self.pat, $kind))
            }
        }

        units_iterator!(impl['a, P: Pattern + Clone] $name<'a, P> => &'a str, where [],
            units: |this| this.piece.end - this.piece.start);
    };
}

split_type!(
    /// The parts of a string between separators; from [`ParallelString::par_split`].
    Split, Kind::Split
);
split_type!(
    /// The parts of a string between separators, without an empty last part; from
    /// [`ParallelString::par_split_terminator`].
    SplitTerminator, Kind::Terminator
);
split_type!(
    /// The parts of a string, each with the separator that ends it; from
    /// [`ParallelString::par_split_inclusive`].
    SplitInclusive, Kind::Inclusive
);

/// Is `c` a line feed?
fn is_newline(c: char) -> bool {
    c == '\n'
}

/// Removes a line's `\n` or `\r\n`.
fn strip_line(line: &str) -> &str {
    match line.strip_suffix('\n') {
        Some(line) => line.strip_suffix('\r').unwrap_or(line),
        None => line,
    }
}

/// Is `s` not empty?
fn not_empty(s: &&str) -> bool {
    !s.is_empty()
}

/// Is `c` ASCII whitespace?
fn is_ascii_space(c: char) -> bool {
    c.is_ascii_whitespace()
}

/// The lines of a string, without their `\n` or `\r\n`; from [`ParallelString::par_lines`].
#[derive(Debug, Clone)]
pub struct Lines<'a> {
    piece: Piece<'a>,
}

/// The sequential iterator of a [`Lines`] leaf.
pub(crate) type LinesSeq<'a> = std::iter::Map<SplitSeq<'a, fn(char) -> bool>, fn(&str) -> &str>;

str_producer!(Lines['a] &'a str, LinesSeq<'a>, |self| SplitSeq::new(
    self.piece,
    is_newline as fn(char) -> bool,
    Kind::Inclusive
)
.map(strip_line as fn(&str) -> &str));

/// The sequential iterator of the whitespace splits.
pub(crate) type WhitespaceSeq<'a> =
    std::iter::Filter<SplitSeq<'a, fn(char) -> bool>, fn(&&str) -> bool>;

/// The non-empty parts of a string between Unicode whitespace; from
/// [`ParallelString::par_split_whitespace`].
#[derive(Debug, Clone)]
pub struct SplitWhitespace<'a> {
    piece: Piece<'a>,
}

str_producer!(SplitWhitespace['a] &'a str, WhitespaceSeq<'a>, |self| SplitSeq::new(
    self.piece,
    char::is_whitespace as fn(char) -> bool,
    Kind::Split
)
.filter(not_empty as fn(&&str) -> bool));

/// The non-empty parts of a string between ASCII whitespace; from
/// [`ParallelString::par_split_ascii_whitespace`].
#[derive(Debug, Clone)]
pub struct SplitAsciiWhitespace<'a> {
    piece: Piece<'a>,
}

str_producer!(SplitAsciiWhitespace['a] &'a str, WhitespaceSeq<'a>, |self| SplitSeq::new(
    self.piece,
    is_ascii_space as fn(char) -> bool,
    Kind::Split
)
.filter(not_empty as fn(&&str) -> bool));

/// The sequential iterator of [`Matches`] and [`MatchIndices`]: the matching chars that
/// start in one piece, with their positions.
#[derive(Debug)]
pub(crate) struct MatchSeq<'a, P> {
    iter: std::str::CharIndices<'a>,
    offset: usize,
    s: &'a str,
    pat: P,
}

impl<'a, P: Pattern> Iterator for MatchSeq<'a, P> {
    type Item = (usize, &'a str);
    fn next(&mut self) -> Option<(usize, &'a str)> {
        let pat = &self.pat;
        let (i, c) = self.iter.find(|&(_, c)| pat.is_match(c))?;
        let at = self.offset + i;
        Some((at, &self.s[at..at + c.len_utf8()]))
    }
}

/// The parts of a string that match a pattern; from [`ParallelString::par_matches`].
#[derive(Debug, Clone)]
pub struct Matches<'a, P> {
    piece: Piece<'a>,
    pat: P,
}

/// The parts of a string that match a pattern, with their byte positions; from
/// [`ParallelString::par_match_indices`].
#[derive(Debug, Clone)]
pub struct MatchIndices<'a, P> {
    piece: Piece<'a>,
    pat: P,
}

fn match_seq<P>(piece: Piece<'_>, pat: P) -> MatchSeq<'_, P> {
    MatchSeq {
        iter: piece.text().char_indices(),
        offset: ceil_boundary(piece.s, piece.start),
        s: piece.s,
        pat,
    }
}

fn second(m: (usize, &str)) -> &str {
    m.1
}

impl<'a, P: Pattern + Clone> Pieces for Matches<'a, P> {
    type Item = &'a str;
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.piece.split_at(index);
        let left = Matches {
            piece: l,
            pat: self.pat.clone(),
        };
        (left, Matches { piece: r, ..self })
    }
    fn fold_with<F: Folder<&'a str>>(self, folder: F) -> F {
        folder.consume_iter(match_seq(self.piece, self.pat).map(second))
    }
}

units_iterator!(impl['a, P: Pattern + Clone] Matches<'a, P> => &'a str, where [],
    units: |this| this.piece.end - this.piece.start);

impl<'a, P: Pattern + Clone> Pieces for MatchIndices<'a, P> {
    type Item = (usize, &'a str);
    fn split_at(self, index: usize) -> (Self, Self) {
        let (l, r) = self.piece.split_at(index);
        let left = MatchIndices {
            piece: l,
            pat: self.pat.clone(),
        };
        (left, MatchIndices { piece: r, ..self })
    }
    fn fold_with<F: Folder<(usize, &'a str)>>(self, folder: F) -> F {
        folder.consume_iter(match_seq(self.piece, self.pat))
    }
}

units_iterator!(impl['a, P: Pattern + Clone] MatchIndices<'a, P> => (usize, &'a str), where [],
    units: |this| this.piece.end - this.piece.start);

/// Parallel iterators over a string's chars, bytes, lines and parts; implemented for `str`
/// (so also for `String`). Every iterator yields what the sequential method of the same name
/// without `par_` yields, in the same order.
///
/// # Examples
/// ```
/// use throttle::prelude::*;
/// let text = "one two\nthree four\n";
/// assert_eq!(text.par_lines().count(), 2);
/// assert_eq!(text.par_split_whitespace().map(str::len).sum::<usize>(), 15);
/// let vowels = text.par_chars().filter(|c| "aeiou".contains(*c)).count();
/// assert_eq!(vowels, 7);
/// ```
pub trait ParallelString {
    /// The string itself.
    fn as_parallel_string(&self) -> &str;

    /// The chars, as `str::chars`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let s: String = "héllo".par_chars().collect();
    /// assert_eq!(s, "héllo");
    /// ```
    fn par_chars(&self) -> Chars<'_> {
        Chars {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The chars with their byte positions, as `str::char_indices`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<(usize, char)> = "aé b".par_char_indices().collect();
    /// assert_eq!(v, "aé b".char_indices().collect::<Vec<_>>());
    /// ```
    fn par_char_indices(&self) -> CharIndices<'_> {
        CharIndices {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The bytes, as `str::bytes`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!("abc".par_bytes().map(u32::from).sum::<u32>(), 294);
    /// ```
    fn par_bytes(&self) -> Bytes<'_> {
        let bytes = self.as_parallel_string().as_bytes();
        Bytes {
            inner: super::Copied::new(super::slice::Iter::new(bytes)),
        }
    }

    /// The UTF-16 code units, as `str::encode_utf16`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<u16> = "a𝄞".par_encode_utf16().collect();
    /// assert_eq!(v, "a𝄞".encode_utf16().collect::<Vec<_>>());
    /// ```
    fn par_encode_utf16(&self) -> EncodeUtf16<'_> {
        EncodeUtf16 {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The parts between separators, as `str::split` with a char pattern.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = "a,,b".par_split(',').collect();
    /// assert_eq!(v, ["a", "", "b"]);
    /// ```
    fn par_split<P: Pattern + Clone>(&self, separator: P) -> Split<'_, P> {
        Split {
            piece: Piece::whole(self.as_parallel_string()),
            pat: separator,
        }
    }

    /// The parts each with its separator, as `str::split_inclusive`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = "a\nb\n".par_split_inclusive('\n').collect();
    /// assert_eq!(v, ["a\n", "b\n"]);
    /// ```
    fn par_split_inclusive<P: Pattern + Clone>(&self, separator: P) -> SplitInclusive<'_, P> {
        SplitInclusive {
            piece: Piece::whole(self.as_parallel_string()),
            pat: separator,
        }
    }

    /// The parts between separators without an empty last part, as `str::split_terminator`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = "a;b;".par_split_terminator(';').collect();
    /// assert_eq!(v, ["a", "b"]);
    /// ```
    fn par_split_terminator<P: Pattern + Clone>(&self, terminator: P) -> SplitTerminator<'_, P> {
        SplitTerminator {
            piece: Piece::whole(self.as_parallel_string()),
            pat: terminator,
        }
    }

    /// The lines, as `str::lines`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = "a\r\nb\n\nc".par_lines().collect();
    /// assert_eq!(v, ["a", "b", "", "c"]);
    /// ```
    fn par_lines(&self) -> Lines<'_> {
        Lines {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The non-empty parts between Unicode whitespace, as `str::split_whitespace`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = " a  b\tc ".par_split_whitespace().collect();
    /// assert_eq!(v, ["a", "b", "c"]);
    /// ```
    fn par_split_whitespace(&self) -> SplitWhitespace<'_> {
        SplitWhitespace {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The non-empty parts between ASCII whitespace, as `str::split_ascii_whitespace`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<&str> = " a  b ".par_split_ascii_whitespace().collect();
    /// assert_eq!(v, ["a", "b"]);
    /// ```
    fn par_split_ascii_whitespace(&self) -> SplitAsciiWhitespace<'_> {
        SplitAsciiWhitespace {
            piece: Piece::whole(self.as_parallel_string()),
        }
    }

    /// The chars that match, as `str::matches` with a char pattern.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// assert_eq!("a1b22".par_matches(|c: char| c.is_ascii_digit()).count(), 3);
    /// ```
    fn par_matches<P: Pattern + Clone>(&self, pattern: P) -> Matches<'_, P> {
        Matches {
            piece: Piece::whole(self.as_parallel_string()),
            pat: pattern,
        }
    }

    /// The chars that match with their byte positions, as `str::match_indices`.
    ///
    /// # Examples
    /// ```
    /// use throttle::prelude::*;
    /// let v: Vec<(usize, &str)> = "a,b,c".par_match_indices(',').collect();
    /// assert_eq!(v, [(1, ","), (3, ",")]);
    /// ```
    fn par_match_indices<P: Pattern + Clone>(&self, pattern: P) -> MatchIndices<'_, P> {
        MatchIndices {
            piece: Piece::whole(self.as_parallel_string()),
            pat: pattern,
        }
    }
}

impl ParallelString for str {
    fn as_parallel_string(&self) -> &str {
        self
    }
}
