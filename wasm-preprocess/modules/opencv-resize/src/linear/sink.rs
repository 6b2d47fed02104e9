//! Where finished destination rows go.
//!
//! Every resize path produces the output one row at a time, so the same
//! kernels can write a plain image or feed the letterbox, which converts each
//! row straight into its float tensor without a full-size u8 intermediate.

/// Receives destination rows in order `0..dst_h`.
pub(crate) trait RowSink {
    /// The buffer (exactly `dst_w * channels` bytes) that row `dy` is
    /// written into.
    fn row_mut(&mut self, dy: usize) -> &mut [u8];
    /// Row `dy` has been written into the buffer last returned.
    fn row_done(&mut self, dy: usize);
}

/// A tightly packed image: each row is written in place.
pub(crate) struct ImageRows<'a> {
    pub(crate) image: &'a mut [u8],
    pub(crate) row_len: usize,
}

impl RowSink for ImageRows<'_> {
    fn row_mut(&mut self, dy: usize) -> &mut [u8] {
        &mut self.image[dy * self.row_len..(dy + 1) * self.row_len]
    }

    fn row_done(&mut self, _dy: usize) {}
}

/// A window of `row_len` bytes at `column_offset` in each row of a larger
/// image whose rows are `stride` bytes, starting at row `first_row`.
pub(crate) struct WindowRows<'a> {
    pub(crate) image: &'a mut [u8],
    pub(crate) stride: usize,
    pub(crate) first_row: usize,
    pub(crate) column_offset: usize,
    pub(crate) row_len: usize,
}

impl RowSink for WindowRows<'_> {
    fn row_mut(&mut self, dy: usize) -> &mut [u8] {
        let start = (self.first_row + dy) * self.stride + self.column_offset;
        &mut self.image[start..start + self.row_len]
    }

    fn row_done(&mut self, _dy: usize) {}
}
