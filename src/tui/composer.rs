//! The input box: multi-line text with a cursor, paste as one edit, and
//! recall of earlier prompts.

use ratatui::text::Line;

#[derive(Default)]
pub struct Composer {
    pub text: String,
    /// Byte offset of the cursor.
    pub cursor: usize,
    history: Vec<String>,
    /// Position while recalling (None: editing a new draft).
    recall: Option<usize>,
}

impl Composer {
    pub fn insert(&mut self, s: &str) {
        self.text.insert_str(self.cursor, s);
        self.cursor += s.len();
        self.recall = None;
    }

    /// Replaces the word from byte `from` to the next whitespace after the
    /// cursor (or the end) with `s`, and puts the cursor after the space
    /// that follows it (one is added when none does).
    pub fn replace_word(&mut self, from: usize, s: &str) {
        let end = self.text[self.cursor..]
            .find(char::is_whitespace)
            .map_or(self.text.len(), |i| self.cursor + i);
        let next = self.text[end..].chars().next();
        let s = match next {
            Some(_) => s.to_string(),
            None => format!("{s} "),
        };
        self.text.replace_range(from..end, &s);
        self.cursor = from + s.len() + next.map_or(0, char::len_utf8);
        self.recall = None;
    }

    pub fn backspace(&mut self) {
        if let Some((i, _)) = self.text[..self.cursor].char_indices().next_back() {
            self.text.replace_range(i..self.cursor, "");
            self.cursor = i;
        }
    }

    pub fn delete(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.text
                .replace_range(self.cursor..self.cursor + c.len_utf8(), "");
        }
    }

    pub fn left(&mut self) {
        if let Some((i, _)) = self.text[..self.cursor].char_indices().next_back() {
            self.cursor = i;
        }
    }

    pub fn right(&mut self) {
        if let Some(c) = self.text[self.cursor..].chars().next() {
            self.cursor += c.len_utf8();
        }
    }

    pub fn home(&mut self) {
        self.cursor = self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1);
    }

    pub fn end(&mut self) {
        self.cursor += self.text[self.cursor..]
            .find('\n')
            .unwrap_or(self.text.len() - self.cursor);
    }

    pub fn clear(&mut self) {
        self.text.clear();
        self.cursor = 0;
        self.recall = None;
    }

    /// Takes the draft for sending and remembers it.
    pub fn take(&mut self) -> String {
        let text = std::mem::take(&mut self.text);
        self.cursor = 0;
        self.recall = None;
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        text
    }

    /// Up: the previous prompt (only when the draft is one line).
    pub fn recall_older(&mut self) -> bool {
        if self.text.contains('\n') || self.history.is_empty() {
            return false;
        }
        let i = match self.recall {
            Some(0) => 0,
            Some(i) => i - 1,
            None => self.history.len() - 1,
        };
        self.recall = Some(i);
        self.text = self.history[i].clone();
        self.cursor = self.text.len();
        true
    }

    pub fn recall_newer(&mut self) -> bool {
        let Some(i) = self.recall else { return false };
        if i + 1 < self.history.len() {
            self.recall = Some(i + 1);
            self.text = self.history[i + 1].clone();
        } else {
            self.recall = None;
            self.text.clear();
        }
        self.cursor = self.text.len();
        true
    }

    pub fn lines(&self) -> Vec<Line<'static>> {
        self.text
            .split('\n')
            .map(|l| Line::from(l.to_string()))
            .collect()
    }

    /// (row, column in chars) of the cursor.
    pub fn cursor_position(&self) -> (usize, usize) {
        let before = &self.text[..self.cursor];
        let row = before.matches('\n').count();
        let col = unicode_width::UnicodeWidthStr::width(before.rsplit('\n').next().unwrap_or(""));
        (row, col)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn editing_and_recall() {
        let mut c = Composer::default();
        c.insert("héllo");
        c.left();
        c.backspace();
        assert_eq!(c.text, "hélo");
        c.end();
        c.insert("\nworld");
        assert_eq!(c.cursor_position(), (1, 5));
        assert_eq!(c.take(), "hélo\nworld");
        c.insert("second");
        c.take();
        assert!(c.recall_older());
        assert_eq!(c.text, "second");
        assert!(!c.recall_older() || c.text == "hélo\nworld");
        assert!(c.recall_newer());
    }
}
