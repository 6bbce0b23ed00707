//! CMake's language, as far as reading a script's commands needs it: each
//! command invocation with its arguments, outside comments (line and
//! bracket), with quoted and bracket arguments kept whole.
//!
//! Nothing is evaluated here: `${VAR}` stays in the argument's text.

/// One argument of a command invocation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arg {
    /// The text, quotes removed (escapes of a quoted argument resolved).
    pub text: String,
    /// Written as a quoted or bracket argument (one argument, whatever it holds).
    pub quoted: bool,
}

/// One command invocation: `name(args)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Command {
    /// 1-based line of the command's name.
    pub line: usize,
    /// The name, lower-case (CMake command names are case-insensitive).
    pub name: String,
    /// The arguments; the parentheses of a nested unquoted group are
    /// arguments `(` and `)` of their own, as `if()` reads them.
    pub args: Vec<Arg>,
}

impl Command {
    /// The argument texts.
    pub fn words(&self) -> impl Iterator<Item = &str> {
        self.args.iter().map(|a| a.text.as_str())
    }
}

/// Every command invocation of `text`, in order.
pub fn commands(text: &str) -> Vec<Command> {
    let b = text.as_bytes();
    let mut lx = Lexer { b, i: 0, line: 1 };
    let mut out = Vec::new();
    while lx.i < b.len() {
        let c = b[lx.i];
        if c == b'#' {
            lx.comment();
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let line = lx.line;
            let start = lx.i;
            while lx.i < b.len() && (b[lx.i].is_ascii_alphanumeric() || b[lx.i] == b'_') {
                lx.i += 1;
            }
            let name = text[start..lx.i].to_ascii_lowercase();
            while lx.i < b.len() && (b[lx.i] == b' ' || b[lx.i] == b'\t') {
                lx.i += 1;
            }
            if lx.i < b.len() && b[lx.i] == b'(' {
                lx.i += 1;
                let args = lx.arguments();
                out.push(Command { line, name, args });
            }
        } else {
            lx.step();
        }
    }
    out
}

struct Lexer<'t> {
    b: &'t [u8],
    i: usize,
    line: usize,
}

impl Lexer<'_> {
    fn step(&mut self) {
        if self.b[self.i] == b'\n' {
            self.line += 1;
        }
        self.i += 1;
    }

    /// At `#`: a bracket comment `#[=*[ … ]=*]` or a line comment.
    fn comment(&mut self) {
        self.i += 1;
        if let Some(eq) = self.bracket_open() {
            self.bracket_body(eq);
            return;
        }
        while self.i < self.b.len() && self.b[self.i] != b'\n' {
            self.i += 1;
        }
    }

    /// At `[`: the number of `=` of a bracket opening `[=*[`, consumed; else nothing consumed.
    fn bracket_open(&mut self) -> Option<usize> {
        if self.b.get(self.i) != Some(&b'[') {
            return None;
        }
        let mut j = self.i + 1;
        while self.b.get(j) == Some(&b'=') {
            j += 1;
        }
        if self.b.get(j) != Some(&b'[') {
            return None;
        }
        let eq = j - self.i - 1;
        self.i = j + 1;
        Some(eq)
    }

    /// After a bracket opening with `eq` `=`: its body, up to and past the closing `]=*]`.
    fn bracket_body(&mut self, eq: usize) -> String {
        let start = self.i;
        while self.i < self.b.len() {
            if self.b[self.i] == b']'
                && self.b[self.i + 1..].iter().take(eq).all(|&c| c == b'=')
                && self.b.get(self.i + 1 + eq) == Some(&b']')
            {
                let body = String::from_utf8_lossy(&self.b[start..self.i]).into_owned();
                self.i += eq + 2;
                return body;
            }
            self.step();
        }
        String::from_utf8_lossy(&self.b[start..]).into_owned()
    }

    /// After `(`: the arguments, up to and past the matching `)`.
    fn arguments(&mut self) -> Vec<Arg> {
        let mut out = Vec::new();
        let mut depth = 1;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'#' => self.comment(),
                b'(' => {
                    depth += 1;
                    self.i += 1;
                    out.push(unquoted("("));
                }
                b')' => {
                    depth -= 1;
                    self.i += 1;
                    if depth == 0 {
                        return out;
                    }
                    out.push(unquoted(")"));
                }
                b'"' => {
                    self.i += 1;
                    let text = self.quoted();
                    out.push(Arg { text, quoted: true });
                }
                b'[' => match self.bracket_open() {
                    Some(eq) => {
                        let text = self.bracket_body(eq);
                        out.push(Arg { text, quoted: true });
                    }
                    None => out.push(Arg {
                        text: self.unquoted_text(),
                        quoted: false,
                    }),
                },
                c if c.is_ascii_whitespace() => self.step(),
                _ => out.push(Arg {
                    text: self.unquoted_text(),
                    quoted: false,
                }),
            }
        }
        out
    }

    /// After `"`: the quoted argument's text, up to and past the closing `"`.
    fn quoted(&mut self) -> String {
        let mut out = Vec::new();
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'"' => {
                    self.i += 1;
                    break;
                }
                b'\\' if self.i + 1 < self.b.len() => {
                    let n = self.b[self.i + 1];
                    match n {
                        b'\n' => self.line += 1,
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b';' => out.extend_from_slice(b"\\;"),
                        _ => out.push(n),
                    }
                    self.i += 2;
                }
                _ => {
                    out.push(c);
                    self.step();
                }
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    /// An unquoted argument: up to a blank, a parenthesis, `#` or a quote
    /// that does not continue it; `${…}` and `$<…>` are kept whole.
    fn unquoted_text(&mut self) -> String {
        let mut out = Vec::new();
        let mut braces = 0usize;
        while self.i < self.b.len() {
            let c = self.b[self.i];
            match c {
                b'\\' if self.i + 1 < self.b.len() => {
                    out.push(self.b[self.i + 1]);
                    self.i += 2;
                    continue;
                }
                b'$' if self.b.get(self.i + 1) == Some(&b'{') => {
                    braces += 1;
                    out.extend_from_slice(b"${");
                    self.i += 2;
                    continue;
                }
                b'}' if braces > 0 => braces -= 1,
                c if braces == 0
                    && (c.is_ascii_whitespace() || matches!(c, b'(' | b')' | b'#' | b'"')) =>
                {
                    break
                }
                _ => {}
            }
            out.push(c);
            self.i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

fn unquoted(text: &str) -> Arg {
    Arg {
        text: text.to_owned(),
        quoted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(c: &Command) -> Vec<&str> {
        c.words().collect()
    }

    #[test]
    fn commands_arguments_and_lines() {
        let cs = commands(
            "# file(READ not/this)\nFILE(STRINGS \"${D}/a b.h\" v REGEX \"^#define X\")\n#[[ set(no)\n]]\nif((A) AND NOT B) # c\n  set(X [=[br]]acket]=] y)\nendif()\nmessage(\"file(READ q)\")\n",
        );
        let names: Vec<(&str, usize)> = cs.iter().map(|c| (c.name.as_str(), c.line)).collect();
        assert_eq!(
            names,
            [
                ("file", 2),
                ("if", 5),
                ("set", 6),
                ("endif", 7),
                ("message", 8)
            ]
        );
        assert_eq!(
            words(&cs[0]),
            ["STRINGS", "${D}/a b.h", "v", "REGEX", "^#define X"]
        );
        assert!(cs[0].args[1].quoted && !cs[0].args[2].quoted);
        assert_eq!(words(&cs[1]), ["(", "A", ")", "AND", "NOT", "B"]);
        assert_eq!(words(&cs[2]), ["X", "br]]acket", "y"]);
        assert_eq!(words(&cs[4]), ["file(READ q)"]);
    }

    #[test]
    fn unquoted_arguments_keep_variable_references_whole() {
        let cs = commands("set(${a b}/x\\ y z)\nset (v ${p}(x))");
        assert_eq!(words(&cs[0]), ["${a b}/x y", "z"]);
        assert_eq!(words(&cs[1]), ["v", "${p}", "(", "x", ")"]);
    }
}
