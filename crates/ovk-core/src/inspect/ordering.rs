//! An order of the outputs that puts related ones side by side, so that blocks of related
//! labels show as blocks in a heatmap of L: average-linkage hierarchical clustering on the
//! correlation distance 1 − ρ, then the leaves ordered optimally — the order consistent with
//! the tree that minimises the sum of distances between neighbours (Bar-Joseph, Gifford,
//! Jaakkola, "Fast optimal leaf ordering for hierarchical clustering", 2001).

use ndarray::{Array2, ArrayView2};
use serde::{Deserialize, Serialize};

use super::correlation;

/// Above this many outputs the optimal leaf ordering (O(m³)) gives way to the tree's order with
/// each node's children flipped greedily where their facing leaves are closer.
pub(crate) const MAX_OPTIMAL: usize = 600;

/// How an order was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OrderKind {
    /// The file's order.
    File,
    /// Average linkage, optimal leaf ordering.
    OptimalLeaf,
    /// Average linkage, greedy flips (more than `MAX_OPTIMAL` outputs).
    Greedy,
}

/// A permutation of the outputs: `order[k]` is the output shown k-th.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ordering {
    /// `order[k]`: the index of the output shown k-th.
    pub order: Vec<usize>,
    /// How the order was found.
    pub kind: OrderKind,
    /// Σ of 1 − ρ between neighbours in this order (lower: related outputs closer).
    pub(crate) path_length: f64,
}

/// The file's order, for comparison.
pub fn file_order(l: ArrayView2<f64>) -> Ordering {
    let d = distances(l);
    let order: Vec<usize> = (0..l.nrows()).collect();
    Ordering {
        path_length: path_length(&d, &order),
        order,
        kind: OrderKind::File,
    }
}

/// The clustered order of a symmetric output kernel `l` (m×m).
pub fn clustered_order(l: ArrayView2<f64>) -> Ordering {
    let m = l.nrows();
    let d = distances(l);
    if m < 3 {
        let order: Vec<usize> = (0..m).collect();
        return Ordering {
            path_length: path_length(&d, &order),
            order,
            kind: OrderKind::OptimalLeaf,
        };
    }
    let tree = average_linkage(&d);
    let (order, kind) = if m <= MAX_OPTIMAL {
        (optimal_leaf_order(&tree, &d), OrderKind::OptimalLeaf)
    } else {
        (greedy_leaf_order(&tree, &d), OrderKind::Greedy)
    };
    Ordering {
        path_length: path_length(&d, &order),
        order,
        kind,
    }
}

/// 1 − ρ(L), ρ the correlation view.
fn distances(l: ArrayView2<f64>) -> Array2<f64> {
    correlation(l).mapv(|r| 1.0 - r)
}

fn path_length(d: &Array2<f64>, order: &[usize]) -> f64 {
    order.windows(2).map(|w| d[[w[0], w[1]]]).sum()
}

/// A binary tree over the leaves 0..m: node `m + k` joins `children[k]`.
struct Tree {
    m: usize,
    children: Vec<(usize, usize)>,
}

impl Tree {
    fn root(&self) -> usize {
        self.m + self.children.len() - 1
    }

    #[cfg(test)]
    fn leaves(&self, v: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![v];
        while let Some(u) = stack.pop() {
            if u < self.m {
                out.push(u);
            } else {
                let (a, b) = self.children[u - self.m];
                stack.push(b);
                stack.push(a);
            }
        }
        out
    }
}

/// Average linkage by the nearest-neighbour chain (O(m²) time and memory; average linkage is
/// reducible, so the chain finds the same merges as the textbook O(m³) loop).
fn average_linkage(d: &Array2<f64>) -> Tree {
    let m = d.nrows();
    let mut dist = d.clone();
    let mut size = vec![1usize; m];
    let mut active = vec![true; m];
    // cluster slot → tree node
    let mut node: Vec<usize> = (0..m).collect();
    let mut children = Vec::with_capacity(m - 1);
    let mut chain: Vec<usize> = Vec::new();
    for _ in 0..m - 1 {
        if chain.is_empty() {
            chain.push(active.iter().position(|&a| a).expect("an active cluster"));
        }
        loop {
            let a = *chain.last().expect("a chain");
            let prev = chain.len().checked_sub(2).map(|i| chain[i]);
            // nearest active neighbour of a; ties go to the previous link, so the chain ends
            let mut best = prev;
            let mut best_d = prev.map_or(f64::INFINITY, |p| dist[[a, p]]);
            for b in 0..m {
                if active[b] && b != a && dist[[a, b]] < best_d {
                    best = Some(b);
                    best_d = dist[[a, b]];
                }
            }
            let b = best.expect("two active clusters");
            if Some(b) == prev {
                chain.pop();
                chain.pop();
                // merge b into a's slot
                let (na, nb) = (size[a] as f64, size[b] as f64);
                for k in 0..m {
                    if active[k] && k != a && k != b {
                        let v = (na * dist[[a, k]] + nb * dist[[b, k]]) / (na + nb);
                        dist[[a, k]] = v;
                        dist[[k, a]] = v;
                    }
                }
                active[b] = false;
                size[a] += size[b];
                children.push((node[b].min(node[a]), node[b].max(node[a])));
                node[a] = m + children.len() - 1;
                break;
            }
            chain.push(b);
        }
    }
    Tree { m, children }
}

/// The order of the tree's leaves minimising the sum of neighbour distances, O(m³).
///
/// `cost[i][j]` is the best order of the leaves of v = lca(i, j) running from i to j — each
/// pair has one lowest common ancestor, so one m×m table holds every node's costs; `via[i][j]`
/// is the pair (k, l) where that order crosses from v's child holding i to the one holding j.
/// An order of a node from i must end in its other child (or at i, for a leaf).
fn optimal_leaf_order(tree: &Tree, d: &Array2<f64>) -> Vec<usize> {
    let m = tree.m;
    let mut cost = Array2::<f64>::zeros((m, m));
    let mut via = vec![(0usize, 0usize); m * m];
    let mut leaves: Vec<Vec<usize>> = vec![Vec::new(); m + tree.children.len()];
    for (i, l) in leaves.iter_mut().enumerate().take(m) {
        l.push(i);
    }
    // The leaves an order of node v starting at leaf i may end at.
    let ends = |leaves: &[Vec<usize>], v: usize, i: usize| -> Vec<usize> {
        if v < m {
            return vec![i];
        }
        let (c1, c2) = tree.children[v - m];
        if leaves[c1].contains(&i) {
            leaves[c2].clone()
        } else {
            leaves[c1].clone()
        }
    };
    // For the leaves of the node being joined on the right: which of its children holds each.
    let mut side = vec![0u8; m];
    for (k, &(a, b)) in tree.children.iter().enumerate() {
        let (la, lb) = (leaves[a].clone(), leaves[b].clone());
        if b >= m {
            let (c1, _) = tree.children[b - m];
            for &l in &lb {
                side[l] = 2;
            }
            for &l in &leaves[c1] {
                side[l] = 1;
            }
        }
        // b's order runs from l to j: across b's two children, or l = j for a leaf.
        let spans = |l: usize, j: usize| if b < m { l == j } else { side[l] != side[j] };
        for &i in &la {
            // For each l in b: the best end kk of a's order from i, then the step kk → l.
            let mut reach = vec![(f64::INFINITY, 0usize); lb.len()];
            for kk in ends(&leaves, a, i) {
                let c = cost[[i, kk]];
                for (s, &l) in lb.iter().enumerate() {
                    let v = c + d[[kk, l]];
                    if v < reach[s].0 {
                        reach[s] = (v, kk);
                    }
                }
            }
            for &j in &lb {
                let mut best = (f64::INFINITY, 0, 0);
                for (s, &l) in lb.iter().enumerate() {
                    if !spans(l, j) {
                        continue;
                    }
                    let v = reach[s].0 + cost[[l, j]];
                    if v < best.0 {
                        best = (v, reach[s].1, l);
                    }
                }
                cost[[i, j]] = best.0;
                cost[[j, i]] = best.0;
                via[i * m + j] = (best.1, best.2);
                via[j * m + i] = (best.2, best.1);
            }
        }
        let mut joined = la;
        joined.extend(lb);
        leaves[m + k] = joined;
    }
    let root = tree.root();
    let (ra, rb) = tree.children[root - m];
    let (mut bi, mut bj, mut bc) = (0, 0, f64::INFINITY);
    for &i in &leaves[ra] {
        for &j in &leaves[rb] {
            if cost[[i, j]] < bc {
                (bi, bj, bc) = (i, j, cost[[i, j]]);
            }
        }
    }
    let mut order = Vec::with_capacity(m);
    unfold(bi, bj, &via, m, &mut order);
    order
}

/// The leaves from `i` to `j` in the order `via` recorded.
fn unfold(i: usize, j: usize, via: &[(usize, usize)], m: usize, out: &mut Vec<usize>) {
    if i == j {
        out.push(i);
        return;
    }
    let (k, l) = via[i * m + j];
    unfold(i, k, via, m, out);
    unfold(l, j, via, m, out);
}

/// The tree's order with each node's two children flipped where that brings closer leaves
/// face to face: O(m) per node, for more outputs than the optimal ordering affords.
fn greedy_leaf_order(tree: &Tree, d: &Array2<f64>) -> Vec<usize> {
    let m = tree.m;
    let mut seq: Vec<Vec<usize>> = (0..m).map(|i| vec![i]).collect();
    seq.resize(m + tree.children.len(), Vec::new());
    for (k, &(a, b)) in tree.children.iter().enumerate() {
        let (sa, sb) = (std::mem::take(&mut seq[a]), std::mem::take(&mut seq[b]));
        let ends = |s: &Vec<usize>| (s[0], s[s.len() - 1]);
        let ((a0, a1), (b0, b1)) = (ends(&sa), ends(&sb));
        // four ways to join: a·b, a·rev(b), rev(a)·b, rev(a)·rev(b)
        let options = [
            (false, false, d[[a1, b0]]),
            (false, true, d[[a1, b1]]),
            (true, false, d[[a0, b0]]),
            (true, true, d[[a0, b1]]),
        ];
        let (ra, rb, _) = options
            .into_iter()
            .min_by(|x, y| x.2.total_cmp(&y.2))
            .expect("four options");
        let mut joined: Vec<usize> = if ra {
            sa.into_iter().rev().collect()
        } else {
            sa
        };
        if rb {
            joined.extend(sb.into_iter().rev());
        } else {
            joined.extend(sb);
        }
        seq[m + k] = joined;
    }
    std::mem::take(&mut seq[tree.root()])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    /// Two blocks of correlated outputs, interleaved in the file: 0, 2, 4 and 1, 3, 5.
    fn interleaved_blocks() -> Array2<f64> {
        Array2::from_shape_fn((6, 6), |(i, j)| {
            if i == j {
                1.0
            } else if i % 2 == j % 2 {
                0.8 - 0.05 * (i as f64 - j as f64).abs()
            } else {
                -0.1
            }
        })
    }

    fn every_permutation(n: usize) -> Vec<Vec<usize>> {
        if n == 1 {
            return vec![vec![0]];
        }
        let mut out = Vec::new();
        for p in every_permutation(n - 1) {
            for k in 0..n {
                let mut q = p.clone();
                q.insert(k, n - 1);
                out.push(q);
            }
        }
        out
    }

    #[test]
    fn blocks_become_contiguous() {
        let l = interleaved_blocks();
        let o = clustered_order(l.view());
        let mut sorted = o.order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..6).collect::<Vec<_>>());
        let parity: Vec<usize> = o.order.iter().map(|i| i % 2).collect();
        let switches = parity.windows(2).filter(|w| w[0] != w[1]).count();
        assert_eq!(switches, 1, "{:?}", o.order);
        assert!(o.path_length < file_order(l.view()).path_length);
    }

    /// On a small matrix the optimal leaf order is no longer than any order the tree allows,
    /// and no longer than the tree's own order and the greedy one.
    #[test]
    fn optimal_order_beats_the_greedy_one_and_is_a_permutation() {
        let m = 7;
        let l = Array2::from_shape_fn((m, m), |(i, j)| {
            let (a, b) = (i as f64, j as f64);
            (-((a * 1.7).sin() - (b * 1.7).sin()).powi(2)).exp()
        });
        let d = distances(l.view());
        let tree = average_linkage(&d);
        let opt = optimal_leaf_order(&tree, &d);
        let greedy = greedy_leaf_order(&tree, &d);
        let plain = tree.leaves(tree.root());
        let len = |o: &[usize]| path_length(&d, o);
        assert!(len(&opt) <= len(&greedy) + 1e-12);
        assert!(len(&opt) <= len(&plain) + 1e-12);
        // Exact: the best of the 2^(m−1) orders the tree allows (each node's children either
        // way round), by brute force.
        fn orders(tree: &Tree, v: usize) -> Vec<Vec<usize>> {
            if v < tree.m {
                return vec![vec![v]];
            }
            let (a, b) = tree.children[v - tree.m];
            let (oa, ob) = (orders(tree, a), orders(tree, b));
            let mut out = Vec::new();
            for x in &oa {
                for y in &ob {
                    out.push([x.as_slice(), y.as_slice()].concat());
                    out.push([y.as_slice(), x.as_slice()].concat());
                }
            }
            out
        }
        let all = orders(&tree, tree.root());
        assert_eq!(all.len(), 1 << (m - 1));
        let best_tree = all.iter().map(|p| len(p)).fold(f64::INFINITY, f64::min);
        assert!(
            (len(&opt) - best_tree).abs() < 1e-12,
            "{} vs {best_tree}",
            len(&opt)
        );
        // and no order at all is shorter than the tree's best by construction
        let best_any = every_permutation(m)
            .iter()
            .map(|p| len(p))
            .fold(f64::INFINITY, f64::min);
        assert!(best_tree >= best_any - 1e-12);
        let mut s = opt.clone();
        s.sort_unstable();
        assert_eq!(s, (0..m).collect::<Vec<_>>());
    }
}
