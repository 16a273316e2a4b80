//! Where `icnput`'s bytes live: memory, or a memory-mapped file. Files are
//! mapped as they are; a stream (stdin from a pipe) is copied through a
//! fixed buffer into an unlinked temporary file which is then mapped, so
//! publishing a stream of any size needs no more RAM than a file does (the
//! kernel's page cache, which it can evict).

use bytes::Bytes;
use memmap2::Mmap;
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::Path;
use std::sync::Arc;

/// The published bytes.
#[derive(Clone)]
pub enum Content {
    Memory(Bytes),
    Mapped(Arc<Mmap>),
}

/// A range of a mapped file handed out as `Bytes` (`Bytes::from_owner`):
/// the segment's content goes to the socket from the page cache, with no
/// copy in the producer.
struct MappedRange {
    map: Arc<Mmap>,
    start: usize,
    end: usize,
}

impl AsRef<[u8]> for MappedRange {
    fn as_ref(&self) -> &[u8] {
        &self.map[self.start..self.end]
    }
}

/// Copy buffer of [`Content::spool`].
const SPOOL_BUFFER_BYTES: usize = 1 << 20;

impl Content {
    /// Length in bytes.
    pub fn len(&self) -> u64 {
        match self {
            Content::Memory(b) => b.len() as u64,
            Content::Mapped(m) => m.len() as u64,
        }
    }

    /// True for empty content.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `start..end` without a copy (a mapped range keeps the mapping
    /// alive); callers keep the range within [`Content::len`].
    pub(crate) fn slice(&self, start: usize, end: usize) -> Bytes {
        match self {
            Content::Memory(b) => b.slice(start..end),
            Content::Mapped(m) => Bytes::from_owner(MappedRange {
                map: Arc::clone(m),
                start,
                end,
            }),
        }
    }

    /// Bytes `start..end` borrowed; callers keep the range within
    /// [`Content::len`].
    pub(crate) fn bytes(&self, start: usize, end: usize) -> &[u8] {
        match self {
            Content::Memory(b) => &b[start..end],
            Content::Mapped(m) => &m[start..end],
        }
    }

    /// Maps an open regular file (empty files become empty content, which
    /// cannot be mapped).
    pub fn map_file(f: &File) -> io::Result<Content> {
        if f.metadata()?.len() == 0 {
            return Ok(Content::Memory(Bytes::new()));
        }
        // SAFETY: the file is mapped read-only. If another process truncates
        // it while we serve, reads of the lost pages fault: the documented
        // hazard of serving a file that is being modified. Spooled files are
        // unlinked temporaries nobody else can open.
        let m = unsafe { Mmap::map(f) }?;
        Ok(Content::Mapped(Arc::new(m)))
    }

    /// Maps the file at `path`.
    pub fn open(path: &Path) -> io::Result<Content> {
        Content::map_file(&File::open(path)?)
    }

    /// Copies `r` to an unlinked temporary file in `dir` (the system's
    /// temporary directory when `None`) and maps it.
    pub fn spool(r: &mut dyn Read, dir: Option<&Path>) -> io::Result<Content> {
        let mut f = match dir {
            Some(d) => tempfile::tempfile_in(d)?,
            None => tempfile::tempfile()?,
        };
        let mut buf = vec![0u8; SPOOL_BUFFER_BYTES];
        loop {
            let n = match r.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            f.write_all(&buf[..n])?;
        }
        f.flush()?;
        Content::map_file(&f)
    }

    /// Standard input: mapped directly when it is a regular file (`< file`),
    /// spooled otherwise (a pipe or a terminal).
    pub fn stdin(spool_dir: Option<&Path>) -> io::Result<Content> {
        use std::os::fd::AsFd;
        let stdin = io::stdin();
        let f = File::from(stdin.as_fd().try_clone_to_owned()?);
        if f.metadata()?.is_file() {
            return Content::map_file(&f);
        }
        Content::spool(&mut stdin.lock(), spool_dir)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that yields `len` pseudo-random bytes in small pieces, so
    /// nothing holds the whole stream.
    struct Stream {
        left: usize,
        x: u64,
    }

    impl Read for Stream {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = out.len().min(self.left).min(4099);
            for b in &mut out[..n] {
                self.x ^= self.x << 13;
                self.x ^= self.x >> 7;
                self.x ^= self.x << 17;
                *b = self.x as u8;
            }
            self.left -= n;
            Ok(n)
        }
    }

    #[test]
    fn spooled_stream_is_mapped_byte_for_byte() {
        let len = 3 * SPOOL_BUFFER_BYTES + 12_345;
        let dir = tempfile::tempdir().unwrap();
        let c = Content::spool(&mut Stream { left: len, x: 7 }, Some(dir.path())).unwrap();
        assert!(matches!(c, Content::Mapped(_)));
        assert_eq!(c.len(), len as u64);
        let mut want = vec![0u8; len];
        Stream { left: len, x: 7 }.read_exact(&mut want).unwrap();
        assert_eq!(&c.slice(0, len)[..], &want[..]);
        assert_eq!(&c.slice(len - 10, len)[..], &want[len - 10..]);
        // The spool file is unlinked: nothing is left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn empty_stream_and_file_are_empty_content() {
        let c = Content::spool(&mut io::empty(), None).unwrap();
        assert!(c.is_empty());
        let f = tempfile::NamedTempFile::new().unwrap();
        assert!(Content::open(f.path()).unwrap().is_empty());
    }
}
