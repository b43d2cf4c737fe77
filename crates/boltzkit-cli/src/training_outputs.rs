//! The outputs written during training (the `--log`, the `--checkpoint`): a failed write stops
//! the run instead of ending it with an error that loses the model, and the command's last
//! line says exactly what was written where.
//!
//! [`StopOnWriteFailure`] wraps an output observer: when its write fails (a full disk, a
//! removed folder) it records the failure in [`WriteFailures`] and stops the run at that
//! epoch, keeping the model; a failure of its final write is recorded too. The command then
//! writes the model to `-o` and ends with [`after_training`]'s one line (exit 1).

use boltzkit::fit::{Control, Count, Observer, StopReason};
use boltzkit::rbm::train::Progress;
use std::cell::RefCell;
use std::path::Path;
use std::rc::Rc;

/// The first failed write of a training output: what it was writing, its error line, and the
/// epoch of the model kept when it failed.
#[derive(Debug, Clone, PartialEq)]
pub struct WriteFailure {
    /// What was being written (`the log l.jsonl`).
    pub what: String,
    /// The error, one line.
    pub error: String,
    /// Epochs done when it failed.
    pub epoch: usize,
}

/// Where the wrapped observers record their first failure.
#[derive(Debug, Clone, Default)]
pub struct WriteFailures(Rc<RefCell<Option<WriteFailure>>>);

impl WriteFailures {
    /// The first failure, if any.
    pub fn first(&self) -> Option<WriteFailure> {
        self.0.borrow().clone()
    }

    fn record(&self, what: &str, error: &boltzkit::Error, epoch: usize) {
        self.0.borrow_mut().get_or_insert_with(|| WriteFailure {
            what: what.to_string(),
            error: crate::exit::one_line(&anyhow::Error::msg(error.to_string())),
            epoch,
        });
    }
}

/// An output observer (a [`boltzkit::rbm::train::JsonlLog`], a
/// [`boltzkit::rbm::train::Checkpoint`]) whose failed write stops training (the model of that
/// epoch kept) instead of ending it with an error.
pub struct StopOnWriteFailure<O> {
    inner: O,
    what: String,
    failures: WriteFailures,
}

impl<O> StopOnWriteFailure<O> {
    /// `inner`, writing `what` (e.g. `the log l.jsonl`), recording into `failures`.
    pub fn new(inner: O, what: impl Into<String>, failures: &WriteFailures) -> Self {
        StopOnWriteFailure {
            inner,
            what: what.into(),
            failures: failures.clone(),
        }
    }
}

impl<'a, O: Observer<Progress<'a>>> Observer<Progress<'a>> for StopOnWriteFailure<O> {
    fn start(&mut self, p: &mut Progress<'a>) -> boltzkit::Result<()> {
        // nothing is trained yet: an error here loses nothing
        self.inner.start(p)
    }

    fn observe(&mut self, p: &mut Progress<'a>) -> boltzkit::Result<Control> {
        match self.inner.observe(p) {
            Ok(control) => Ok(control),
            Err(e) => {
                self.failures.record(&self.what, &e, p.epoch);
                Ok(Control::Stop(StopReason::EarlyStopped {
                    after: Count::epochs(p.epoch),
                    detail: format!("writing {} failed", self.what),
                }))
            }
        }
    }

    fn finish(&mut self, p: &mut Progress<'a>, stop: &StopReason) -> boltzkit::Result<()> {
        if let Err(e) = self.inner.finish(p, stop) {
            self.failures.record(&self.what, &e, p.epoch);
        }
        Ok(())
    }
}

/// The end of a training command once it tried to write the model to `output`
/// (`written`): `Ok` when nothing failed, else one line saying what failed, at which epoch,
/// and where the model is: in `output`, or (when that write failed too) nowhere but the last
/// good `checkpoint`, if one can be read, or nowhere at all.
pub fn after_training(
    failure: Option<WriteFailure>,
    written: anyhow::Result<()>,
    output: &Path,
    checkpoint: Option<&Path>,
) -> anyhow::Result<()> {
    let lost = |e: &anyhow::Error| {
        let mut line = format!(
            "writing the model to {} failed ({}): the model was NOT saved",
            output.display(),
            crate::exit::one_line(e)
        );
        if let Some(c) = checkpoint.and_then(last_checkpoint) {
            line.push_str(&format!("; {c}"));
        }
        line
    };
    match (failure, written) {
        (None, Ok(())) => Ok(()),
        (None, Err(e)) => anyhow::bail!("{}", lost(&e)),
        (Some(f), Ok(())) => anyhow::bail!(
            "training stopped after epoch {}: writing {} failed ({}); the model of epoch {} \
             was written to {}",
            f.epoch,
            f.what,
            f.error,
            f.epoch,
            output.display()
        ),
        (Some(f), Err(e)) => anyhow::bail!(
            "training stopped after epoch {}: writing {} failed ({}); {}",
            f.epoch,
            f.what,
            f.error,
            lost(&e)
        ),
    }
}

/// `the last checkpoint, of epoch N, is PATH` when `path` holds a readable model.
fn last_checkpoint(path: &Path) -> Option<String> {
    let file = boltzkit::rbm::file::load_rbm(path).ok()?;
    let epoch = file.metadata.get("epoch").map_or("?", String::as_str);
    Some(format!(
        "the last checkpoint, of epoch {epoch}, is {}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_says_where_the_model_is() {
        let out = Path::new("m.safetensors");
        assert!(after_training(None, Ok(()), out, None).is_ok());
        let f = WriteFailure {
            what: "the log l.jsonl".into(),
            error: "l.jsonl: no space left".into(),
            epoch: 3,
        };
        let e = after_training(Some(f.clone()), Ok(()), out, None).unwrap_err();
        assert_eq!(
            e.to_string(),
            "training stopped after epoch 3: writing the log l.jsonl failed (l.jsonl: no space \
             left); the model of epoch 3 was written to m.safetensors"
        );
        let full = || Err(anyhow::anyhow!("m.safetensors: no space left"));
        let e = after_training(Some(f), full(), out, None).unwrap_err();
        assert!(e.to_string().ends_with("the model was NOT saved"), "{e}");
        let e = after_training(None, full(), out, Some(Path::new("/none.safetensors")));
        assert!(e.unwrap_err().to_string().contains("NOT saved"));
    }
}
