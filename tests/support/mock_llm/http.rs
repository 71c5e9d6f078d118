//! Minimal hand-written HTTP/1.1: parse one request, write one response.
//! Streams use `Transfer-Encoding: chunked`; every HTTP chunk is written separately.

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

pub(super) struct Request {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One client connection with a read buffer.
pub(super) struct Conn {
    sock: TcpStream,
    buf: Vec<u8>,
}

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

impl Conn {
    pub fn new(sock: TcpStream) -> Conn {
        Conn {
            sock,
            buf: Vec::new(),
        }
    }

    async fn fill(&mut self) -> io::Result<()> {
        let mut tmp = [0u8; 8192];
        let n = self.sock.read(&mut tmp).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "client closed the connection mid-request",
            ));
        }
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(())
    }

    /// Bytes up to `delim` (consumed, not returned).
    async fn until(&mut self, delim: &[u8], limit: usize) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.buf.windows(delim.len()).position(|w| w == delim) {
                let out = self.buf[..i].to_vec();
                self.buf.drain(..i + delim.len());
                return Ok(out);
            }
            if self.buf.len() > limit {
                return Err(invalid("line or header block too long"));
            }
            self.fill().await?;
        }
    }

    async fn take(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.buf.len() < n {
            self.fill().await?;
        }
        Ok(self.buf.drain(..n).collect())
    }

    /// Waits for the next request on a kept-alive connection; `false` when
    /// the client closed it (or stayed idle past `idle`) instead.
    pub async fn next_request_arrives(&mut self, idle: Duration) -> bool {
        if !self.buf.is_empty() {
            return true;
        }
        matches!(tokio::time::timeout(idle, self.fill()).await, Ok(Ok(())))
    }

    /// Reads the header block and a `Content-Length` or chunked body.
    pub async fn read_request(&mut self) -> io::Result<Request> {
        let head = self.until(b"\r\n\r\n", MAX_HEAD).await?;
        let head = String::from_utf8(head).map_err(|_| invalid("header block is not UTF-8"))?;
        let mut lines = head.split("\r\n");
        let request_line = lines.next().unwrap_or_default();
        let target = request_line
            .split(' ')
            .nth(1)
            .ok_or_else(|| invalid(format!("bad request line {request_line:?}")))?;
        let path = target.split('?').next().unwrap_or_default().to_string();
        let mut headers = Vec::new();
        for line in lines {
            let (name, value) = line
                .split_once(':')
                .ok_or_else(|| invalid(format!("bad header line {line:?}")))?;
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
        }
        let get = |name: &str| headers.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let chunked =
            get("transfer-encoding").is_some_and(|v| v.to_ascii_lowercase().contains("chunked"));
        let body = if chunked {
            self.read_chunked_body().await?
        } else if let Some(len) = get("content-length") {
            let len: usize = len.parse().map_err(|_| invalid("bad content-length"))?;
            if len > MAX_BODY {
                return Err(invalid("body too large"));
            }
            self.take(len).await?
        } else {
            Vec::new()
        };
        Ok(Request {
            path,
            headers,
            body,
        })
    }

    async fn read_chunked_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.until(b"\r\n", 1024).await?;
            let line = String::from_utf8_lossy(&line);
            let size = line.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size, 16).map_err(|_| invalid("bad chunk size"))?;
            if size == 0 {
                // Trailer section ends with an empty line.
                while !self.until(b"\r\n", MAX_HEAD).await?.is_empty() {}
                return Ok(body);
            }
            if body.len() + size > MAX_BODY {
                return Err(invalid("body too large"));
            }
            body.extend(self.take(size).await?);
            if self.take(2).await? != b"\r\n" {
                return Err(invalid("chunk not followed by CRLF"));
            }
        }
    }

    /// A complete non-streaming response with `Content-Length`.
    pub async fn respond(
        &mut self,
        code: u16,
        headers: &[(String, String)],
        content_type: &str,
        body: &str,
    ) -> io::Result<()> {
        let mut head = format!("HTTP/1.1 {code} {}\r\n", reason(code));
        if !headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("content-type"))
        {
            head.push_str(&format!("content-type: {content_type}\r\n"));
        }
        for (k, v) in headers {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
        head.push_str(&format!(
            "content-length: {}\r\nconnection: close\r\n\r\n",
            body.len()
        ));
        head.push_str(body);
        self.sock.write_all(head.as_bytes()).await?;
        self.sock.flush().await?;
        self.sock.shutdown().await
    }

    /// Status line and headers of a 200 SSE response; `keep_alive` leaves the
    /// connection open for the next request, as real API servers do.
    pub async fn start_stream(&mut self, keep_alive: bool) -> io::Result<()> {
        let connection = if keep_alive { "keep-alive" } else { "close" };
        let head = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n\
             cache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: {connection}\r\n\r\n"
        );
        self.sock.write_all(head.as_bytes()).await?;
        self.sock.flush().await
    }

    /// Writes `pieces` as HTTP chunks: one chunk per piece, or, with `chunk = Some(n)`,
    /// their concatenation re-split into `n`-byte chunks. Each chunk is flushed.
    pub async fn send_pieces<S: AsRef<str>>(
        &mut self,
        pieces: &[S],
        chunk: Option<usize>,
    ) -> io::Result<()> {
        match chunk {
            None => {
                for p in pieces {
                    self.chunk(p.as_ref().as_bytes()).await?;
                }
            }
            Some(n) => {
                let all: Vec<u8> = pieces.iter().flat_map(|p| p.as_ref().bytes()).collect();
                for c in all.chunks(n.max(1)) {
                    self.chunk(c).await?;
                }
            }
        }
        Ok(())
    }

    async fn chunk(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(()); // an empty chunk would terminate the body
        }
        let mut out = format!("{:x}\r\n", data.len()).into_bytes();
        out.extend_from_slice(data);
        out.extend_from_slice(b"\r\n");
        self.sock.write_all(&out).await?;
        self.sock.flush().await
    }

    /// Terminating zero-length chunk, then close the write side.
    pub async fn end_stream(&mut self) -> io::Result<()> {
        self.end_body().await?;
        self.sock.shutdown().await
    }

    /// Terminating zero-length chunk; the connection stays open.
    pub async fn end_body(&mut self) -> io::Result<()> {
        self.sock.write_all(b"0\r\n\r\n").await?;
        self.sock.flush().await
    }

    /// Writes `piece` as one HTTP chunk every `every` until writing fails
    /// (the client went away) or `limit` passes.
    pub async fn repeat_until_closed(&mut self, piece: &str, every: Duration, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        while tokio::time::Instant::now() < deadline {
            if self.chunk(piece.as_bytes()).await.is_err() {
                return;
            }
            tokio::time::sleep(every).await;
        }
    }

    /// Waits until the client closes (EOF or error) or `limit` passes.
    pub async fn wait_for_close(&mut self, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        let mut tmp = [0u8; 1024];
        while let Ok(Ok(n)) = tokio::time::timeout_at(deadline, self.sock.read(&mut tmp)).await {
            if n == 0 {
                return;
            }
        }
    }
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Payload Too Large",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Unknown",
    }
}
