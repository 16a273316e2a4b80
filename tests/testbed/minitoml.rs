//! The subset of TOML the scenario files use, parsed into a
//! `serde_json::Value`: `key = value`, `[table]`, `[[array-of-tables]]`,
//! strings, integers, floats, booleans and (possibly multi-line) arrays.
//!
//! The umbrella package has no `toml` dev-dependency; when it gets one this
//! file can go. Anything outside the subset is an error naming the line, so
//! a scenario file never silently means something else.

use serde_json::{Map, Number, Value};

/// A parse error with its 1-based line number.
#[derive(Debug, Clone, PartialEq)]
pub struct TomlError {
    pub line: usize,
    pub msg: String,
}

impl std::fmt::Display for TomlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.msg)
    }
}

impl std::error::Error for TomlError {}

fn err<T>(line: usize, msg: impl Into<String>) -> Result<T, TomlError> {
    Err(TomlError {
        line,
        msg: msg.into(),
    })
}

/// Where `key = value` lines currently go.
enum Target {
    Root,
    Table(String),
    ArrayItem(String),
}

/// Parses a document into a JSON object.
pub fn parse(text: &str) -> Result<Value, TomlError> {
    let mut root = Map::new();
    let mut target = Target::Root;
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let lineno = i + 1;
        let mut line = strip_comment(lines[i]).trim().to_string();
        i += 1;
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("[[").and_then(|l| l.strip_suffix("]]")) {
            let name = bare_key(name.trim(), lineno)?;
            let arr = root
                .entry(name.clone())
                .or_insert_with(|| Value::Array(Vec::new()));
            let Value::Array(a) = arr else {
                return err(lineno, format!("`{name}` is not an array of tables"));
            };
            a.push(Value::Object(Map::new()));
            target = Target::ArrayItem(name);
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = bare_key(name.trim(), lineno)?;
            if root.contains_key(&name) {
                return err(lineno, format!("table `{name}` defined twice"));
            }
            root.insert(name.clone(), Value::Object(Map::new()));
            target = Target::Table(name);
            continue;
        }
        let Some(eq) = line.find('=') else {
            return err(lineno, "expected `key = value`, `[table]` or `[[table]]`");
        };
        // A multi-line array continues until its brackets balance.
        while bracket_depth(&line[eq + 1..]) > 0 {
            let Some(next) = lines.get(i) else {
                return err(lineno, "unterminated array");
            };
            line.push(' ');
            line.push_str(strip_comment(next).trim());
            i += 1;
        }
        let key = bare_key(line[..eq].trim(), lineno)?;
        let mut rest = line[eq + 1..].trim();
        let value = parse_value(&mut rest, lineno)?;
        if !rest.trim().is_empty() {
            return err(lineno, format!("unexpected text after the value: {rest:?}"));
        }
        let table: &mut Map<String, Value> = match &target {
            Target::Root => &mut root,
            Target::Table(t) => root
                .get_mut(t)
                .and_then(Value::as_object_mut)
                .expect("table inserted when its header was read"),
            Target::ArrayItem(t) => root
                .get_mut(t)
                .and_then(Value::as_array_mut)
                .and_then(|a| a.last_mut())
                .and_then(Value::as_object_mut)
                .expect("array item pushed when its header was read"),
        };
        if table.insert(key.clone(), value).is_some() {
            return err(lineno, format!("key `{key}` given twice"));
        }
    }
    Ok(Value::Object(root))
}

/// The line without a `#` comment (a `#` inside a string is kept).
fn strip_comment(line: &str) -> &str {
    let mut in_str = false;
    let mut escaped = false;
    for (i, c) in line.char_indices() {
        match c {
            '\\' if in_str && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => in_str = !in_str,
            '#' if !in_str => return &line[..i],
            _ => {}
        }
        escaped = false;
    }
    line
}

/// Open `[` minus closing `]` outside strings.
fn bracket_depth(s: &str) -> i32 {
    let mut depth = 0;
    let mut in_str = false;
    let mut escaped = false;
    for c in s.chars() {
        match c {
            '\\' if in_str && !escaped => {
                escaped = true;
                continue;
            }
            '"' if !escaped => in_str = !in_str,
            '[' if !in_str => depth += 1,
            ']' if !in_str => depth -= 1,
            _ => {}
        }
        escaped = false;
    }
    depth
}

fn bare_key(k: &str, line: usize) -> Result<String, TomlError> {
    if !k.is_empty()
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        Ok(k.to_string())
    } else {
        err(line, format!("invalid key {k:?} (bare keys only)"))
    }
}

fn parse_value(s: &mut &str, line: usize) -> Result<Value, TomlError> {
    *s = s.trim_start();
    if let Some(rest) = s.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => {
                    *s = &rest[i + 1..];
                    return Ok(Value::String(out));
                }
                '\\' => match chars.next().map(|(_, c)| c) {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some('"') => out.push('"'),
                    Some('\\') => out.push('\\'),
                    other => return err(line, format!("unsupported escape {other:?}")),
                },
                c => out.push(c),
            }
        }
        return err(line, "unterminated string");
    }
    if let Some(rest) = s.strip_prefix('[') {
        *s = rest;
        let mut items = Vec::new();
        loop {
            *s = s.trim_start();
            if let Some(rest) = s.strip_prefix(']') {
                *s = rest;
                return Ok(Value::Array(items));
            }
            items.push(parse_value(s, line)?);
            *s = s.trim_start();
            if let Some(rest) = s.strip_prefix(',') {
                *s = rest;
            } else if !s.starts_with(']') {
                return err(line, "expected `,` or `]` in array");
            }
        }
    }
    let end = s
        .find(|c: char| c == ',' || c == ']' || c.is_whitespace())
        .unwrap_or(s.len());
    let (tok, rest) = s.split_at(end);
    *s = rest;
    match tok {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        "" => return err(line, "missing value"),
        _ => {}
    }
    let digits = tok.replace('_', "");
    if let Ok(n) = digits.parse::<i64>() {
        return Ok(Value::Number(n.into()));
    }
    match digits.parse::<f64>().ok().and_then(Number::from_f64) {
        Some(n) if digits.chars().any(|c| c.is_ascii_digit()) => Ok(Value::Number(n)),
        _ => err(line, format!("invalid value {tok:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tables_arrays_and_values() {
        let v = parse(
            r#"
            # a comment
            name = "dumb # bell"   # trailing comment
            duration_s = 30
            rate = 1.5e6
            big = 20_000_000
            on = true
            schemes = ["none",
                       "pcon"]   # continues
            [defaults]
            delay_ms = 1
            [[link]]
            a = "c1"
            b = "r1"
            [[link]]
            a = "r1"
            b = "r2"
            "#,
        )
        .unwrap();
        assert_eq!(
            v,
            json!({
                "name": "dumb # bell", "duration_s": 30, "rate": 1.5e6,
                "big": 20_000_000, "on": true, "schemes": ["none", "pcon"],
                "defaults": {"delay_ms": 1},
                "link": [{"a": "c1", "b": "r1"}, {"a": "r1", "b": "r2"}]
            })
        );
    }

    #[test]
    fn errors_name_the_line() {
        assert_eq!(parse("a = 1\nb = \n").unwrap_err().line, 2);
        assert_eq!(parse("a = 1\na = 2\n").unwrap_err().line, 2);
        assert_eq!(parse("x.y = 1").unwrap_err().line, 1);
        assert_eq!(parse("a = [1, 2").unwrap_err().line, 1);
        assert_eq!(parse("a = \"open").unwrap_err().line, 1);
        assert_eq!(parse("a = 1 2").unwrap_err().line, 1);
        assert_eq!(parse("[t]\n[t]").unwrap_err().line, 2);
        assert_eq!(parse("a = nope").unwrap_err().line, 1);
    }
}
