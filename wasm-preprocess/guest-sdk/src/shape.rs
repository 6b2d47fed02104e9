use crate::Error;

/// The most dimensions a shape has: the shape block holds a rank and 8 dimensions.
pub const MAX_RANK: usize = 8;

/// A tensor shape: rank and up to [`MAX_RANK`] dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    rank: u32,
    dims: [u32; MAX_RANK],
}

impl Shape {
    /// A shape with dimensions `dims`. Panics (at compile time in a `const`) if there are
    /// more than [`MAX_RANK`] of them: a module's output shape is its own choice.
    pub const fn new(dims: &[u32]) -> Shape {
        assert!(dims.len() <= MAX_RANK, "a shape has at most 8 dimensions");
        let mut shape = Shape {
            rank: dims.len() as u32,
            dims: [0; MAX_RANK],
        };
        let mut i = 0;
        while i < dims.len() {
            shape.dims[i] = dims[i];
            i += 1;
        }
        shape
    }

    /// The dimensions, outermost first.
    pub fn dims(&self) -> &[u32] {
        &self.dims[..self.rank as usize]
    }

    /// The number of dimensions.
    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// The product of the dimensions (1 for rank 0), or `None` if it does not fit a `usize`,
    /// in which case no input of this shape fits in memory either.
    pub fn element_count(&self) -> Option<usize> {
        self.dims()
            .iter()
            .try_fold(1usize, |count, &dim| count.checked_mul(dim as usize))
    }
}

/// The shape block's layout: rank, then the dimensions. Natively only the tests use it.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
impl Shape {
    /// Reads the shape block the host wrote: a rank above [`MAX_RANK`] is a bad shape.
    pub(crate) fn from_block(block: &[u32; MAX_RANK + 1]) -> Result<Shape, Error> {
        let rank = block[0] as usize;
        if rank > MAX_RANK {
            return Err(Error::BadShape);
        }
        Ok(Shape::new(&block[1..1 + rank]))
    }

    /// The shape block for this shape; unused dimensions are zero so no stale value lingers.
    pub(crate) fn to_block(self) -> [u32; MAX_RANK + 1] {
        let mut block = [0; MAX_RANK + 1];
        block[0] = self.rank;
        block[1..].copy_from_slice(&self.dims);
        block
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_given_dimensions() {
        const IMAGE: Shape = Shape::new(&[3, 224, 224]);
        assert_eq!(IMAGE.dims(), &[3, 224, 224]);
        assert_eq!(IMAGE.rank(), 3);
        assert_eq!(IMAGE.element_count(), Some(3 * 224 * 224));
    }

    #[test]
    fn a_scalar_has_one_element() {
        assert_eq!(Shape::new(&[]).element_count(), Some(1));
        assert_eq!(Shape::new(&[5, 0, 7]).element_count(), Some(0));
    }

    #[test]
    fn element_count_overflow_is_none() {
        let huge = Shape::new(&[u32::MAX, u32::MAX, u32::MAX]);
        assert_eq!(huge.element_count(), None);
    }

    #[test]
    #[should_panic(expected = "at most 8 dimensions")]
    fn more_than_eight_dimensions_panic() {
        Shape::new(&[1; 9]);
    }

    #[test]
    fn block_round_trip_and_zeroed_tail() {
        let shape = Shape::new(&[28, 28]);
        assert_eq!(shape.to_block(), [2, 28, 28, 0, 0, 0, 0, 0, 0]);
        assert_eq!(Shape::from_block(&shape.to_block()), Ok(shape));
        // Dimensions past the rank are ignored when reading.
        let shape = Shape::from_block(&[1, 784, 9, 9, 9, 9, 9, 9, 9]).unwrap();
        assert_eq!(shape, Shape::new(&[784]));
    }

    #[test]
    fn block_with_rank_above_eight_is_a_bad_shape() {
        assert_eq!(
            Shape::from_block(&[9, 1, 1, 1, 1, 1, 1, 1, 1]),
            Err(Error::BadShape)
        );
        assert_eq!(Shape::from_block(&[u32::MAX; 9]), Err(Error::BadShape));
    }
}
