//! Reading what a user names — a data file, a config, a sidecar, a session's record — without
//! trusting what is at the path: only regular files are read (a FIFO would block, `/dev/zero`
//! or `/dev/urandom` never end), never more than a cap, and never through a memory map (a file
//! truncated while mapped kills the process with SIGBUS). One place, so every reader follows the
//! same rules.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{ErrorKind, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

use crate::error::input_at;
use crate::{OvkError, Result};

/// What a path holds, in words, when it is not a regular file.
pub fn kind_of(meta: &Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_symlink() {
        "a symbolic link"
    } else {
        "a regular file"
    }
}

/// Open `path` for reading if (after following symbolic links) it is a regular file; its
/// metadata is taken from the open handle, so what is checked is what is read. The open never
/// blocks: a FIFO is opened non-blocking and then refused.
pub(crate) fn open_regular(path: &Path, what: &str) -> Result<(File, Metadata)> {
    let f = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| open_error(path, e))?;
    let meta = f.metadata().map_err(|e| open_error(path, e))?;
    if !meta.is_file() {
        return Err(input_at(
            path,
            format!(
                "is {}, not a regular file; ovk reads {what} only from regular files (copy it \
                 into a file first)",
                kind_of(&meta)
            ),
        ));
    }
    Ok((f, meta))
}

fn open_error(path: &Path, e: std::io::Error) -> OvkError {
    let why = match e.kind() {
        ErrorKind::NotFound => "no such file".to_string(),
        ErrorKind::PermissionDenied => "permission denied".to_string(),
        ErrorKind::IsADirectory => "is a directory, not a file".to_string(),
        _ => format!("cannot be opened: {e}"),
    };
    OvkError::input_as(
        crate::ErrorKind::UnreadableFile,
        format!("{}: {why}", path.display()),
    )
}

/// The whole of a regular file, refused when it is larger than `cap` bytes (checked before
/// reading, and again while reading in case it grows) or changes size while being read.
pub(crate) fn read_regular(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    let (f, meta) = open_regular(path, what)?;
    let len = meta.len();
    if len > cap {
        return Err(too_large(path, len, cap, what));
    }
    read_all(path, f, len, cap, what, |_, _| Ok(()))
}

/// `read_regular` that lets `inspect` refuse the bytes as they arrive (each chunk once, with
/// its offset; a large file's stretches are read in parallel, each in order), so a hostile
/// file is rejected after its first bad block, not after reading it all.
pub(crate) fn read_regular_with(
    path: &Path,
    cap: u64,
    what: &str,
    inspect: impl Fn(u64, &[u8]) -> Result<()> + Sync,
) -> Result<Vec<u8>> {
    let (f, meta) = open_regular(path, what)?;
    let len = meta.len();
    if len > cap {
        return Err(too_large(path, len, cap, what));
    }
    read_all(path, f, len, cap, what, inspect)
}

/// From this size a file is read by every rayon thread at once, each its own stretch (`pread`):
/// most of reading into fresh memory is faulting its pages in, and the threads share that. On
/// this 2-core machine (this loop in a standalone program) a 190 MB CSV took 0.13–0.16 s on two
/// threads against 0.21–0.25 s on one, a 132 MB Parquet file 0.10–0.11 s against 0.15 s.
const PARALLEL_READ_FROM: u64 = 16 << 20;

/// Bytes read (and inspected) at a time.
const CHUNK: usize = 1 << 20;

fn read_all(
    path: &Path,
    f: File,
    len: u64,
    cap: u64,
    what: &str,
    inspect: impl Fn(u64, &[u8]) -> Result<()> + Sync,
) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.try_reserve_exact(len as usize).map_err(|_| {
        OvkError::Resources(format!(
            "{}: cannot hold its {} in memory",
            path.display(),
            crate::kernels::format_bytes(len)
        ))
    })?;
    if len >= PARALLEL_READ_FROM {
        read_in_parallel(path, &f, len, &mut out, &inspect)?;
    } else {
        let mut r = f.take(cap.saturating_add(1));
        loop {
            // Each chunk lands in `out` directly (`read_to_end` fills spare capacity): a copy
            // through a buffer was a tenth of reading a numeric table.
            let start = out.len();
            match (&mut r).take(CHUNK as u64).read_to_end(&mut out) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(unreadable(path, e)),
            }
            inspect(start as u64, &out[start..])?;
            if out.len() as u64 > cap {
                return Err(too_large(path, out.len() as u64, cap, what));
            }
        }
    }
    if out.len() as u64 != len {
        return Err(changed_size(path, len, &out.len().to_string()));
    }
    Ok(out)
}

/// Fill `out` (empty, with room for `len` bytes) with the file's `len` bytes, one stretch per
/// thread; then make sure the file has nothing beyond them.
fn read_in_parallel(
    path: &Path,
    f: &File,
    len: u64,
    out: &mut Vec<u8>,
    inspect: &(impl Fn(u64, &[u8]) -> Result<()> + Sync),
) -> Result<()> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let n = len as usize;
    let threads = rayon::current_num_threads().max(1);
    let stretch = n.div_ceil(threads).next_multiple_of(CHUNK);
    let spare = &mut out.spare_capacity_mut()[..n];
    let read = |(k, part): (usize, &mut [std::mem::MaybeUninit<u8>])| -> Result<()> {
        for (c, piece) in part.chunks_mut(CHUNK).enumerate() {
            let at = (k * stretch + c * CHUNK) as u64;
            // Zeroed first, so that what `read_at` fills is initialised memory; the zeroing is
            // also what faults the pages in, on this thread.
            piece.fill(std::mem::MaybeUninit::new(0));
            // SAFETY: every byte of `piece` was initialised just above.
            let piece: &mut [u8] = unsafe { &mut *(piece as *mut [_] as *mut [u8]) };
            let mut filled = 0;
            while filled < piece.len() {
                match f.read_at(&mut piece[filled..], at + filled as u64) {
                    Ok(0) => return Err(changed_size(path, len, "fewer")),
                    Ok(k) => filled += k,
                    Err(e) if e.kind() == ErrorKind::Interrupted => {}
                    Err(e) => return Err(unreadable(path, e)),
                }
            }
            inspect(at, piece)?;
        }
        Ok(())
    };
    // Each stretch stops at its own first failure; the earliest stretch's failure is reported.
    let results: Vec<Result<()>> = spare
        .par_chunks_mut(stretch)
        .enumerate()
        .map(read)
        .collect();
    results.into_iter().collect::<Result<()>>()?;
    // SAFETY: the stretches cover all n bytes and each was initialised and filled above.
    unsafe { out.set_len(n) };
    let mut beyond = [0u8; 1];
    loop {
        match f.read_at(&mut beyond, len) {
            Ok(0) => return Ok(()),
            Ok(_) => return Err(changed_size(path, len, "more")),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(unreadable(path, e)),
        }
    }
}

fn unreadable(path: &Path, e: std::io::Error) -> OvkError {
    input_at(path, format!("cannot be read: {e}"))
}

fn changed_size(path: &Path, len: u64, read: &str) -> OvkError {
    input_at(
        path,
        format!(
            "changed size while being read ({len} bytes when opened, {read} read); read it again \
             once it is complete"
        ),
    )
}

fn too_large(path: &Path, len: u64, cap: u64, what: &str) -> OvkError {
    input_at(
        path,
        format!(
            "is {}, more than ovk reads as {what} (at most {})",
            crate::kernels::format_bytes(len),
            crate::kernels::format_bytes(cap)
        ),
    )
}

/// Refuse text that holds a NUL byte: no CSV, TSV, TOML or JSON file does, and a sparse or
/// binary file would otherwise be read (and parsed) in full before being found empty.
pub(crate) fn refuse_nul(path: &Path, offset: u64, chunk: &[u8], what: &str) -> Result<()> {
    // `contains` is memchr: a 190 MB file's byte-by-byte search took about 0.1 s.
    if !chunk.contains(&0) {
        return Ok(());
    }
    match chunk.iter().position(|&b| b == 0) {
        None => Ok(()),
        Some(i) => Err(input_at(
            path,
            format!(
                "holds a NUL byte at offset {}: {what} is text, and this file is not \
                 (binary, or a sparse file full of zeros)",
                offset + i as u64
            ),
        )),
    }
}

/// Read a text file whole, refusing NUL bytes as they arrive.
pub fn read_text_file(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    read_regular_with(path, cap, what, |offset, chunk| {
        refuse_nul(path, offset, chunk, what)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("ovk-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn devices_fifos_and_directories_are_refused_without_blocking() {
        let d = temp("kinds");
        let fifo = d.join("p.csv");
        assert!(std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success());
        for (p, kind) in [
            (fifo.as_path(), "named pipe"),
            (Path::new("/dev/zero"), "character device"),
            (d.as_path(), "directory"),
        ] {
            let e = read_regular(p, 1 << 20, "data").unwrap_err();
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().contains(kind), "{e}");
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn caps_and_nul_bytes_are_refused() {
        let d = temp("caps");
        let f = d.join("a.csv");
        std::fs::write(&f, "a,b\n1,2\n").unwrap();
        assert_eq!(read_regular(&f, 100, "data").unwrap(), b"a,b\n1,2\n");
        let e = read_regular(&f, 4, "data").unwrap_err().to_string();
        assert!(e.contains("at most 4 B"), "{e}");
        std::fs::write(&f, b"a,b\n1,\x002\n").unwrap();
        let e = read_text_file(&f, 100, "CSV").unwrap_err().to_string();
        assert!(e.contains("NUL byte at offset 6"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_large_file_read_in_stretches_is_whole_and_its_first_nul_is_named() {
        let d = temp("large");
        let f = d.join("a.csv");
        // Past the parallel threshold and not a multiple of the chunk: every stretch, and a
        // short last chunk, is read.
        let n = PARALLEL_READ_FROM as usize + 3 * CHUNK + 12_345;
        let text: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
        std::fs::write(&f, &text).unwrap();
        assert!(read_text_file(&f, u64::MAX, "CSV").unwrap() == text);
        // NUL bytes in the last chunk and in the middle: the earlier one is named, whichever
        // thread reads it.
        let mut bad = text.clone();
        bad[n - 7] = 0;
        bad[n / 2 + 5] = 0;
        std::fs::write(&f, &bad).unwrap();
        let e = read_text_file(&f, u64::MAX, "CSV").unwrap_err().to_string();
        assert!(
            e.contains(&format!("NUL byte at offset {}", n / 2 + 5)),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
