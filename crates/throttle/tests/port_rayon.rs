//! Small programs written for rayon, ported by changing their `use` lines only
//! (`use rayon::prelude::*;` → `use throttle::prelude::*;`, `rayon::join` → `throttle::join`),
//! checked against serial versions of the same programs.

use throttle::prelude::*;

/// Word frequencies: split lines in parallel, count per piece, merge the maps.
mod word_count {
    use std::collections::HashMap;
    use throttle::prelude::*;

    pub fn parallel(text: &str) -> HashMap<String, usize> {
        let lines: Vec<&str> = text.lines().collect();
        lines
            .par_iter()
            .fold(HashMap::new, |mut counts, line| {
                for word in line.split_whitespace() {
                    *counts.entry(word.to_lowercase()).or_insert(0) += 1;
                }
                counts
            })
            .reduce(HashMap::new, |mut a, b| {
                for (word, n) in b {
                    *a.entry(word).or_insert(0) += n;
                }
                a
            })
    }

    pub fn serial(text: &str) -> HashMap<String, usize> {
        let mut counts = HashMap::new();
        for word in text.split_whitespace() {
            *counts.entry(word.to_lowercase()).or_insert(0) += 1;
        }
        counts
    }
}

/// One Jacobi step of a 5-point stencil on a `w × h` image, rows written in parallel.
mod stencil {
    use throttle::prelude::*;

    fn cell(src: &[f32], w: usize, h: usize, x: usize, y: usize) -> f32 {
        if x == 0 || y == 0 || x == w - 1 || y == h - 1 {
            return src[y * w + x];
        }
        let at = |x: usize, y: usize| src[y * w + x];
        0.2 * (at(x, y) + at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1))
    }

    pub fn parallel(src: &[f32], dst: &mut [f32], w: usize, h: usize) {
        dst.par_chunks_mut(w).enumerate().for_each(|(y, row)| {
            for (x, out) in row.iter_mut().enumerate() {
                *out = cell(src, w, h, x, y);
            }
        });
    }

    pub fn serial(src: &[f32], dst: &mut [f32], w: usize, h: usize) {
        for (y, row) in dst.chunks_mut(w).enumerate() {
            for (x, out) in row.iter_mut().enumerate() {
                *out = cell(src, w, h, x, y);
            }
        }
    }
}

/// A histogram of byte values with `fold` + `reduce`.
mod histogram {
    use throttle::prelude::*;

    pub fn parallel(data: &[u8]) -> Vec<u64> {
        data.par_chunks(4096)
            .fold(
                || vec![0u64; 256],
                |mut h, chunk| {
                    for &b in chunk {
                        h[b as usize] += 1;
                    }
                    h
                },
            )
            .reduce(
                || vec![0u64; 256],
                |mut a, b| {
                    a.iter_mut().zip(&b).for_each(|(x, y)| *x += y);
                    a
                },
            )
    }

    pub fn serial(data: &[u8]) -> Vec<u64> {
        let mut h = vec![0u64; 256];
        for &b in data {
            h[b as usize] += 1;
        }
        h
    }
}

/// The textbook parallel quicksort on `join`.
mod quicksort {
    pub fn parallel<T: PartialOrd + Send>(v: &mut [T]) {
        if v.len() <= 1 {
            return;
        }
        let mid = partition(v);
        let (lo, hi) = v.split_at_mut(mid);
        throttle::join(|| parallel(lo), || parallel(&mut hi[1..]));
    }

    fn partition<T: PartialOrd>(v: &mut [T]) -> usize {
        let pivot = v.len() - 1;
        v.swap(v.len() / 2, pivot);
        let mut store = 0;
        for i in 0..pivot {
            if v[i] <= v[pivot] {
                v.swap(i, store);
                store += 1;
            }
        }
        v.swap(store, pivot);
        store
    }
}

/// Nested parallelism: for each row (of uneven length), a parallel sum of squares.
mod nested {
    use throttle::prelude::*;

    pub fn parallel(rows: &[Vec<u64>]) -> Vec<u64> {
        rows.par_iter()
            .map(|row| row.par_iter().map(|x| x * x).sum())
            .collect()
    }

    pub fn serial(rows: &[Vec<u64>]) -> Vec<u64> {
        rows.iter()
            .map(|row| row.iter().map(|x| x * x).sum())
            .collect()
    }
}

fn lcg(seed: &mut u64) -> u64 {
    *seed = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *seed >> 33
}

#[test]
fn word_count_matches_serial() {
    let words = [
        "the", "Quick", "brown", "fox", "THE", "lazy", "dog", "jumps",
    ];
    let mut seed = 7;
    let text: String = (0..20_000)
        .map(|i| {
            let w = words[(lcg(&mut seed) % words.len() as u64) as usize];
            if i % 12 == 11 {
                format!("{w}\n")
            } else {
                format!("{w} ")
            }
        })
        .collect();
    assert_eq!(word_count::parallel(&text), word_count::serial(&text));
}

#[test]
fn stencil_matches_serial() {
    let (w, h) = (257, 131);
    let mut seed = 11;
    let src: Vec<f32> = (0..w * h).map(|_| (lcg(&mut seed) % 256) as f32).collect();
    let mut a = vec![0f32; w * h];
    let mut b = vec![0f32; w * h];
    stencil::parallel(&src, &mut a, w, h);
    stencil::serial(&src, &mut b, w, h);
    assert_eq!(a, b);
}

#[test]
fn histogram_matches_serial() {
    let mut seed = 3;
    let data: Vec<u8> = (0..1_000_003).map(|_| lcg(&mut seed) as u8).collect();
    assert_eq!(histogram::parallel(&data), histogram::serial(&data));
}

#[test]
fn quicksort_matches_par_sort() {
    let mut seed = 5;
    let data: Vec<u32> = (0..200_000).map(|_| lcg(&mut seed) as u32).collect();
    let mut a = data.clone();
    let mut b = data.clone();
    let mut c = data;
    quicksort::parallel(&mut a);
    b.par_sort();
    c.par_sort_unstable();
    assert_eq!(a, b);
    assert_eq!(a, c);
}

#[test]
fn nested_matches_serial() {
    let mut seed = 9;
    let rows: Vec<Vec<u64>> = (0..500)
        .map(|_| {
            let n = lcg(&mut seed) % 3000;
            (0..n).collect()
        })
        .collect();
    assert_eq!(nested::parallel(&rows), nested::serial(&rows));
}

#[test]
fn programs_run_inside_a_limited_pool() {
    let pool = throttle::Pool::new(4).unwrap();
    pool.set_concurrency(2).unwrap();
    let mut seed = 13;
    let data: Vec<u8> = (0..100_000).map(|_| lcg(&mut seed) as u8).collect();
    let h = pool.install(|| histogram::parallel(&data));
    assert_eq!(h, histogram::serial(&data));
    let total: u64 = pool.install(|| h.par_iter().sum());
    assert_eq!(total, 100_000);
}
