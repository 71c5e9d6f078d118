//! The one HTTP server of the tests ([`Server`]: a thread with its own
//! runtime on `127.0.0.1`) and minimal hand-written HTTP/1.1 on each
//! connection ([`Conn`]: parse one request, write one response). Streams use
//! `Transfer-Encoding: chunked`; every HTTP chunk is written separately.
//! Hand-written because the mock LLM must write exact bytes, torn streams
//! and stalls that a server framework would not let it.

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

/// A server on `127.0.0.1:0` that hands every connection to a handler, on
/// a thread of its own, until it is dropped (dropping its runtime cancels
/// every connection task).
pub struct Server {
    addr: SocketAddr,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<thread::JoinHandle<()>>,
}

impl Server {
    /// Starts serving; `name` prefixes its messages on stderr.
    pub fn start<F, Fut>(name: &'static str, handler: F) -> Server
    where
        F: Fn(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = io::Result<()>> + Send + 'static,
    {
        let listener = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap_or_else(|e| panic!("{name}: bind: {e}"));
        listener
            .set_nonblocking(true)
            .unwrap_or_else(|e| panic!("{name}: set_nonblocking: {e}"));
        let addr = listener
            .local_addr()
            .unwrap_or_else(|e| panic!("{name}: local_addr: {e}"));
        let (tx, rx) = oneshot::channel();
        let thread = thread::Builder::new()
            .name(name.into())
            .spawn(move || accept_loop(name, listener, handler, rx))
            .unwrap_or_else(|e| panic!("{name}: spawn server thread: {e}"));
        Server {
            addr,
            shutdown: Some(tx),
            thread: Some(thread),
        }
    }

    /// Serves fixed routes: `route(path)` gives each response; every
    /// connection takes one request.
    pub fn routes(route: fn(&str) -> Page) -> Server {
        Server::start("http-routes", move |sock| async move {
            let mut conn = Conn::new(sock);
            let req = conn.read_request().await?;
            let page = route(&req.path);
            conn.respond_bytes(page.code, &page.headers, "text/plain", &page.body)
                .await
        })
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }
}

/// One response of [`Server::routes`].
pub struct Page {
    pub code: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Page {
    pub fn new(code: u16, header: Option<(&str, &str)>, body: &[u8]) -> Page {
        Page {
            code,
            headers: header
                .map(|(k, v)| vec![(k.to_string(), v.to_string())])
                .unwrap_or_default(),
            body: body.to_vec(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop<F, Fut>(
    name: &'static str,
    listener: std::net::TcpListener,
    handler: F,
    mut shutdown: oneshot::Receiver<()>,
) where
    F: Fn(TcpStream) -> Fut,
    Fut: Future<Output = io::Result<()>> + Send + 'static,
{
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("{name}: cannot build runtime: {e}");
            return;
        }
    };
    rt.block_on(async move {
        let listener = match TcpListener::from_std(listener) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{name}: cannot register listener: {e}");
                return;
            }
        };
        loop {
            tokio::select! {
                _ = &mut shutdown => break,
                accepted = listener.accept() => match accepted {
                    Ok((sock, _)) => {
                        let conn = handler(sock);
                        tokio::spawn(async move {
                            if let Err(e) = conn.await {
                                eprintln!("{name}: connection dropped: {e}");
                            }
                        });
                    }
                    Err(e) => {
                        eprintln!("{name}: accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(10)).await;
                    }
                },
            }
        }
    });
}

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

pub struct Request {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One client connection with a read buffer.
pub struct Conn {
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
        self.respond_bytes(code, headers, content_type, body.as_bytes())
            .await
    }

    /// [`Conn::respond`] with a body of any bytes.
    pub async fn respond_bytes(
        &mut self,
        code: u16,
        headers: &[(String, String)],
        content_type: &str,
        body: &[u8],
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
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(body);
        self.sock.write_all(&bytes).await?;
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
        301 => "Moved Permanently",
        302 => "Found",
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
