//! How numbers are shown in text: units and plurals, the grid that fits a terminal, and the one
//! table every experiment and `scan` print.

pub mod grid;
pub mod table;
pub mod units;
