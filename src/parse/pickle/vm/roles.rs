//! A new container's role, decided when it is pushed from what lies below it on the stack
//! (torch-snapshot.md §5.1), and the open-container limit.

use crate::parse::pickle::error::PickleError;
use crate::parse::pickle::schema::{Kind, Role};

use super::{Machine, Val};

impl Machine {
    pub(super) fn new_container(&mut self, kind: Kind, off: u64) -> Result<(), PickleError> {
        let role = self.child_role(kind);
        let v = self
            .b
            .new_container(role, kind)
            .map_err(|w| self.malformed(off, w))?;
        self.b.note_push(v, self.stack.len());
        self.stack.push(v);
        if matches!(v, Val::Obj(_)) {
            // Only a typed container can raise the count of open containers.
            let open = self.b.open_containers();
            if open > self.stats.max_open_containers {
                self.stats.max_open_containers = open;
                if open > crate::parse::pickle::schema::MAX_OPEN {
                    return Err(self.limit(
                        off,
                        "snapshot containers under construction",
                        crate::parse::pickle::schema::MAX_OPEN,
                    ));
                }
            }
        }
        Ok(())
    }

    /// The role of a container of `kind` about to be pushed, from what is below it.
    ///
    /// Candidates, in order: (B) the container below the last MARK (`SETITEMS`/`APPENDS`
    /// batch); (A) a list on top of the stack (single `APPEND`); (A') a key on top of a
    /// dict (single `SETITEM`). The first candidate whose schema expects `kind` wins.
    fn child_role(&self, kind: Kind) -> Role {
        let len = self.stack.len();
        if len == 0 && self.marks.is_empty() {
            return Role::root(kind);
        }
        let last_mark = self.marks.last().copied();
        let mut generic = false;
        // (B) batch under a mark.
        if let Some(m) = last_mark {
            if m >= 1 {
                let parent = self.stack[m - 1];
                let n = len - m;
                match self.b.container_kind(parent) {
                    Some(Kind::Dict) => {
                        if n % 2 == 1 && matches!(self.stack[len - 1], Val::Str(_)) {
                            let role = self.b.value_role(parent, self.stack[len - 1]);
                            if role.accepts(kind) {
                                if role != Role::Generic {
                                    return role;
                                }
                                generic = true;
                            }
                        }
                    }
                    Some(Kind::List) | Some(Kind::Set) => {
                        let role = self.b.element_role(parent, n as u64);
                        if role.accepts(kind) {
                            if role != Role::Generic {
                                return role;
                            }
                            generic = true;
                        }
                    }
                    _ => {}
                }
            }
        }
        if generic {
            return Role::Generic;
        }
        let above_mark = |i: usize| last_mark.is_none_or(|m| m <= i);
        // (A) single APPEND into the list on top.
        if let Some(&top) = self.stack.last() {
            if above_mark(len - 1) && last_mark != Some(len) {
                if let Some(Kind::List) = self.b.container_kind(top) {
                    let role = self.b.element_role(top, 0);
                    if role.accepts(kind) {
                        return role;
                    }
                }
            }
        }
        // (A') single SETITEM: key on top of a dict.
        if len >= 2 && above_mark(len - 2) && last_mark != Some(len) && last_mark != Some(len - 1) {
            let (dict, key) = (self.stack[len - 2], self.stack[len - 1]);
            if let (Some(Kind::Dict), Val::Str(_)) = (self.b.container_kind(dict), key) {
                let role = self.b.value_role(dict, key);
                if role.accepts(kind) {
                    return role;
                }
            }
        }
        Role::Generic
    }
}
