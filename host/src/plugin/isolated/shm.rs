//! Shared memory between the host and the plugin's process: anonymous memory files (memfd)
//! mapped by both, and the passing of such a file over a Unix socket.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::ptr::NonNull;

/// A shared mapping of a memory file, unmapped on drop.
pub(super) struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; who writes what is arranged by its users (atomics in
// the shared region, a read-only mapping for sample images).
unsafe impl Send for Mapping {}
// SAFETY: as for Send.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// A new memory file of `len` bytes (zeroed), mapped read-write; the file is returned to
    /// be handed to the other process.
    pub(super) fn create(name: &str, len: usize) -> io::Result<(OwnedFd, Mapping)> {
        let name = std::ffi::CString::new(name).map_err(io::Error::other)?;
        // SAFETY: a NUL-terminated name; the returned descriptor is owned here.
        let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned by nothing else.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: a valid descriptor.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mapping = Mapping::map(fd.as_raw_fd(), len, true)?;
        Ok((fd, mapping))
    }

    /// Maps `len` bytes of the memory file `fd`, read-write or read-only.
    pub(super) fn map(fd: RawFd, len: usize, writable: bool) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "empty mapping"));
        }
        let protection = match writable {
            true => libc::PROT_READ | libc::PROT_WRITE,
            false => libc::PROT_READ,
        };
        // SAFETY: a fresh mapping chosen by the kernel; checked below.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                protection,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(Mapping {
            base: NonNull::new(base as *mut u8).expect("mmap returned a mapping"),
            len,
        })
    }

    /// The size of a memory file.
    pub(super) fn file_len(fd: RawFd) -> io::Result<usize> {
        // SAFETY: fstat fills the struct it is given.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut stat) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stat.st_size as usize)
    }

    /// Maps the first `len` bytes' pages into this process now, writable, rather than on
    /// first touch: a page both processes first touch during a run costs each a fault, and
    /// one of them waits for the other's (milliseconds on a busy machine). Best effort: a
    /// kernel without MADV_POPULATE_WRITE (before 5.14) faults them as they come.
    pub(super) fn populate(&self, len: usize) {
        self.populate_range(0, len);
    }

    /// As [`populate`](Self::populate), for the bytes from `start` (page-aligned).
    pub(super) fn populate_range(&self, start: usize, len: usize) {
        let len = len.min(self.len.saturating_sub(start));
        if len == 0 {
            return;
        }
        // SAFETY: advice on pages of this mapping (`start` within it, `len` clamped to its
        // end); populating changes no byte.
        unsafe {
            libc::madvise(
                self.base.as_ptr().add(start) as *mut libc::c_void,
                len,
                libc::MADV_POPULATE_WRITE,
            )
        };
    }

    /// The mapped bytes, to fill before the mapping is shared.
    pub(super) fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: `len` mapped bytes, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), self.len) }
    }

    pub(super) fn as_ptr(&self) -> *mut u8 {
        self.base.as_ptr()
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `len` mapped bytes; a mapping read as a slice is one nobody writes while it
        // is shared (sample images).
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.base.as_ptr() as *mut libc::c_void, self.len) };
    }
}

/// The buffers of a message carrying one descriptor and one byte.
struct FdMessage {
    byte: [u8; 1],
    iov: libc::iovec,
    control: Vec<u8>,
}

impl FdMessage {
    fn new() -> Box<FdMessage> {
        // SAFETY: CMSG_SPACE is a pure size computation.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
        let mut buffers = Box::new(FdMessage {
            byte: [0],
            iov: libc::iovec {
                iov_base: std::ptr::null_mut(),
                iov_len: 1,
            },
            control: vec![0; space],
        });
        buffers.iov.iov_base = buffers.byte.as_mut_ptr() as *mut libc::c_void;
        buffers
    }

    /// A message header over the buffers (which must outlive its use).
    fn header(&mut self) -> libc::msghdr {
        // SAFETY: all-zero is a valid msghdr.
        let mut message: libc::msghdr = unsafe { std::mem::zeroed() };
        message.msg_iov = &mut self.iov;
        message.msg_iovlen = 1;
        message.msg_control = self.control.as_mut_ptr() as *mut libc::c_void;
        message.msg_controllen = self.control.len() as _;
        message
    }
}

/// Sends the descriptor `fd` over `socket` (with one byte of data).
pub(super) fn send_fd(socket: &UnixStream, fd: RawFd) -> io::Result<()> {
    let mut buffers = FdMessage::new();
    let message = buffers.header();
    // SAFETY: the control message is written through the CMSG macros within the buffers,
    // which outlive the call.
    unsafe {
        let header = libc::CMSG_FIRSTHDR(&message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header) as *mut RawFd, fd);
        if libc::sendmsg(socket.as_raw_fd(), &message, libc::MSG_NOSIGNAL) != 1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Receives a descriptor sent by [`send_fd`] (blocking).
pub(super) fn receive_fd(socket: &UnixStream) -> io::Result<OwnedFd> {
    let mut buffers = FdMessage::new();
    let mut message = buffers.header();
    // SAFETY: as in send_fd; the received descriptor is checked before it is owned.
    unsafe {
        let received = libc::recvmsg(socket.as_raw_fd(), &mut message, libc::MSG_CMSG_CLOEXEC);
        if received < 0 {
            return Err(io::Error::last_os_error());
        }
        let header = libc::CMSG_FIRSTHDR(&message);
        if received == 0
            || header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "no descriptor received",
            ));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header) as *const RawFd);
        Ok(OwnedFd::from_raw_fd(fd))
    }
}
