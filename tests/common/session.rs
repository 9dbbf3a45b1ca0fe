//! `seqc mcp` driven over stdio by the tests, one JSON-RPC line at a time.

#![allow(dead_code, reason = "each test binary uses a part of this module")]

use crate::common;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout};

/// `seqc mcp` over stdio, initialized; killed when dropped.
pub struct Session {
    child: Child,
    /// Taken when the session is closed.
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Session {
    pub fn start(args: &[&str], data: Option<&Path>) -> Session {
        Session::start_with(args, data, &[])
    }

    /// [`Session::start`] with the variables `env` set.
    pub fn start_with(args: &[&str], data: Option<&Path>, env: &[(&str, &str)]) -> Session {
        let mut command = common::command();
        command.arg("mcp").args(args).envs(env.iter().copied());
        if let Some(data) = data {
            command.arg("--data-dir").arg(data);
        }
        let (child, stdin, stdout) = common::spawn_piped(&mut command);
        let lines = BufReader::new(stdout).lines();
        let mut session = Session {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 0,
        };
        let id = session.send(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "0"}}),
        );
        session.answer(id);
        session.notify("notifications/initialized", json!({}));
        session
    }

    /// Sends a request; its id.
    pub fn send(&mut self, method: &str, params: Value) -> u64 {
        self.next_id += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
        self.next_id
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        let message = json!({"jsonrpc": "2.0", "method": method, "params": params});
        writeln!(self.stdin.as_mut().unwrap(), "{message}").unwrap();
    }

    /// The `result` (or `error`) of request `id`.
    pub fn answer(&mut self, id: u64) -> Value {
        loop {
            let line = self.lines.next().unwrap().unwrap();
            let answer: Value = serde_json::from_str(&line).unwrap();
            if answer["id"] == id {
                return answer.get("result").unwrap_or(&answer["error"]).clone();
            }
        }
    }

    /// Sends `tools/call` of `tool`; its id.
    pub fn send_call(&mut self, tool: &str, arguments: Value) -> u64 {
        self.send("tools/call", json!({"name": tool, "arguments": arguments}))
    }

    /// Calls `tool` with `meta` as the request's `_meta`: its result.
    pub fn call_with_meta(&mut self, tool: &str, arguments: Value, meta: Value) -> Value {
        let id = self.send(
            "tools/call",
            json!({"name": tool, "arguments": arguments, "_meta": meta}),
        );
        self.answer(id)
    }

    /// Ends the session as a client does (stdin closed) and waits for the server to exit:
    /// what it exports at exit is out then.
    pub fn close(mut self) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.child.wait().unwrap()
    }

    /// Calls `tool`: its result.
    pub fn call(&mut self, tool: &str, arguments: Value) -> Value {
        let id = self.send_call(tool, arguments);
        self.answer(id)
    }

    pub fn tools(&mut self) -> Vec<String> {
        let id = self.send("tools/list", json!({}));
        self.answer(id)["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_owned())
            .collect()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
