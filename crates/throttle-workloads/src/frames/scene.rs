//! The meshes a frame transforms.

use std::sync::{Mutex, MutexGuard};

/// One mesh: a 4×4 transform and the vertices it is applied to every frame.
#[derive(Debug)]
struct Mesh {
    /// Row-major; a rotation about the z axis, so vertex magnitudes stay
    /// bounded (no overflow or denormals however many frames run).
    transform: [[f64; 4]; 4],
    vertices: Vec<[f64; 4]>,
}

impl Mesh {
    fn new(index: usize, vertices: usize) -> Mesh {
        // A distinct small angle per mesh; the exact values do not matter.
        let angle = 0.001 * (index % 97 + 1) as f64;
        let (s, c) = angle.sin_cos();
        let transform = [
            [c, -s, 0.0, 0.0],
            [s, c, 0.0, 0.0],
            [0.0, 0.0, 1.0, 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let vertices = (0..vertices)
            .map(|j| {
                let k = (index * 31 + j * 17) as f64;
                [
                    (k % 101.0) / 101.0,
                    (k % 37.0) / 37.0,
                    (k % 13.0) / 13.0,
                    1.0,
                ]
            })
            .collect();
        Mesh {
            transform,
            vertices,
        }
    }

    fn transform(&mut self) {
        let m = &self.transform;
        for v in &mut self.vertices {
            let old = *v;
            for (row, out) in m.iter().zip(v.iter_mut()) {
                *out = row[0] * old[0] + row[1] * old[1] + row[2] * old[2] + row[3] * old[3];
            }
        }
    }
}

/// A scene of meshes, each transformed once per frame.
///
/// Each mesh sits behind its own (uncontended) `Mutex`, so that any
/// scheduler may transform different meshes from different threads through a
/// shared `&Scene` without `unsafe`; every scheduler pays the same lock per
/// mesh.
#[derive(Debug)]
pub struct Scene {
    meshes: Vec<Mutex<Mesh>>,
}

impl Scene {
    /// A scene of `meshes` meshes with `vertices` vertices each, filled with
    /// deterministic values.
    ///
    /// # Examples
    ///
    /// ```
    /// use throttle_workloads::frames::Scene;
    ///
    /// let scene = Scene::new(3, 10);
    /// assert_eq!(scene.meshes(), 3);
    /// assert_eq!(scene.checksum(), Scene::new(3, 10).checksum());
    /// ```
    pub fn new(meshes: usize, vertices: usize) -> Scene {
        Scene {
            meshes: (0..meshes)
                .map(|i| Mutex::new(Mesh::new(i, vertices)))
                .collect(),
        }
    }

    /// The number of meshes.
    pub fn meshes(&self) -> usize {
        self.meshes.len()
    }

    /// Applies mesh `index`'s transform to each of its vertices (one unit of
    /// a frame's parallel loop).
    ///
    /// # Panics
    ///
    /// If `index >= self.meshes()`.
    pub fn transform_mesh(&self, index: usize) {
        self.lock(index).transform();
    }

    /// The sum of every coordinate of every vertex, in a fixed order, so
    /// two scenes that went through the same frames have the same checksum
    /// bit for bit.
    pub fn checksum(&self) -> f64 {
        (0..self.meshes.len())
            .map(|i| {
                self.lock(i)
                    .vertices
                    .iter()
                    .map(|v| v.iter().sum::<f64>())
                    .sum::<f64>()
            })
            .sum()
    }

    fn lock(&self, index: usize) -> MutexGuard<'_, Mesh> {
        // A panic while transforming leaves the mesh valid (plain floats),
        // so a poisoned lock can be used as is.
        self.meshes[index]
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}
