use super::Factoid;
use crate::infer::*;
use std::fmt;
use tract_core::optim::CONST_FOLD_MEM_BUDGET;
use tract_data::TooEarly;

tract_core::dyn_clone::clone_trait_object!(InferenceOp);

fn tensor_mem(t: &Tensor) -> u64 {
    (t.volume() * t.datum_type().size_of()) as u64
}

/// An operation with tensor type inference
pub trait InferenceOp: Op {
    /// Infers properties about the input and output tensors.
    ///
    /// The `inputs` and `outputs` arguments correspond to properties about
    /// the input and output tensors that are already known.
    ///
    /// The default implementation will call the private infer_facts method,
    /// which is usually implemented using the InferenceRulesOp trait. It will
    /// also try to eval() the op if its a EvalOp and if the inputs are
    /// fully determined.
    ///
    /// Facts carry no graph, so that eager eval cannot count a constant's
    /// consumers: on top of holding the output within
    /// [`CONST_FOLD_MEM_BUDGET`], it requires every input to be plain and
    /// itself under the allowance.
    ///
    /// Returns Err in case of an unrecoverable error during the inference,
    /// and the refined properties about the inputs and outputs otherwise.
    fn infer(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<(TVec<InferenceFact>, TVec<InferenceFact>, TVec<InferenceFact>)> {
        // Outputs that already hold values were folded on an earlier visit. Folding again
        // would build equal tensors in new buffers, which the analyser then compares element by
        // element with the ones the graph holds (up to the budget each, on every visit that a
        // neighbour's change triggers): the bulk of an ONNX model's analysis time.
        let outputs_known =
            !outputs.is_empty() && outputs.iter().all(|o| o.value.is_concrete());
        let (infered_inputs, infered_outputs, observed) =
            self.infer_facts(inputs, outputs, observed).context("Infering facts")?;

        if infered_inputs.len() > 0
            && !outputs_known
            && let Some(input_values) = infered_inputs
                .iter()
                .map(|i| {
                    i.value
                        .concretize()
                        .filter(|t| t.is_plain_ram() && tensor_mem(t) <= CONST_FOLD_MEM_BUDGET)
                        .map(|t| t.into_tvalue())
                })
                .collect::<Option<TVec<_>>>()
        {
            let input_mem: u64 = input_values.iter().map(|t| tensor_mem(t)).sum();
            match self.eval_out_of_plan(input_values) {
                Ok(None) => (),
                Ok(Some(values)) => {
                    let output_mem: u64 = values.iter().map(|t| tensor_mem(t)).sum();
                    if output_mem <= input_mem.max(CONST_FOLD_MEM_BUDGET) {
                        let output_values = values
                            .into_iter()
                            .map(|t| t.into_arc_tensor().try_into())
                            .collect::<TractResult<TVec<_>>>()?;
                        return Ok((infered_inputs, output_values, observed));
                    }
                }
                Err(e) if e.root_cause().downcast_ref::<TooEarly>().is_some() => (),
                Err(e) => return Err(e).context("Eager eval during inference"),
            }
        }

        Ok((infered_inputs, infered_outputs, observed))
    }

    /// Allow an op to specify a supplementary list of outlets facts that
    /// will trigger inference again.
    fn observe_outlets(
        &self,
        _model: &InferenceModel,
        _node: &InferenceNode,
    ) -> TractResult<Vec<OutletId>> {
        Ok(vec![])
    }

    /// Infer properties about inputs and output tensors. This method does not
    /// need to deal with the "trivial" stateless op with fully determined
    /// inputs cases.
    ///
    /// Most of the time, it is implemented using InferenceRulesOp.
    fn infer_facts(
        &mut self,
        inputs: TVec<&InferenceFact>,
        outputs: TVec<&InferenceFact>,
        observed: TVec<&InferenceFact>,
    ) -> TractResult<(TVec<InferenceFact>, TVec<InferenceFact>, TVec<InferenceFact>)>;

    /// Early pass on inference model, after analyse, but before translation to
    /// typed network. Meant to deal with some framework idiosyncrasies that
    /// manifest with temporaries nodes that can run some form of inference but
    /// require refactoring the network before it can be evaluated.
    ///
    /// Called after successful analyse, but before translating to typed model.
    #[allow(unused_variables)]
    fn incorporate(
        &self,
        model: &InferenceModel,
        node: &InferenceNode,
    ) -> TractResult<Option<InferenceModelPatch>> {
        Ok(None)
    }

    fn nboutputs(&self) -> TractResult<usize> {
        Ok(1)
    }

    /// Reinterpret the InferenceOp as an Op.
    fn as_op(&self) -> &dyn Op;

    /// Reinterpret the InferenceOp as an Op, mutably.
    fn as_op_mut(&mut self) -> &mut dyn Op;

    /// Called during translation to TypedModel.
    #[allow(unused_variables)]
    fn to_typed(
        &self,
        source: &InferenceModel,
        node: &InferenceNode,
        target: &mut TypedModel,
        mapping: &HashMap<OutletId, OutletId>,
    ) -> TractResult<TVec<OutletId>> {
        bail!("Operator can not be made a TypedOp.")
    }
}

impl std::fmt::Display for Box<dyn InferenceOp> {
    fn fmt(&self, fmt: &mut fmt::Formatter) -> fmt::Result {
        write!(fmt, "{}", self.name())
    }
}

impl<O: InferenceOp> From<O> for Box<dyn InferenceOp> {
    fn from(it: O) -> Box<dyn InferenceOp> {
        Box::new(it)
    }
}

impl AsRef<dyn Op> for dyn InferenceOp {
    fn as_ref(&self) -> &dyn Op {
        self.as_op()
    }
}

impl AsRef<dyn Op> for Box<dyn InferenceOp> {
    fn as_ref(&self) -> &dyn Op {
        self.as_op()
    }
}

impl AsMut<dyn Op> for dyn InferenceOp {
    fn as_mut(&mut self) -> &mut dyn Op {
        self.as_op_mut()
    }
}

impl AsMut<dyn Op> for Box<dyn InferenceOp> {
    fn as_mut(&mut self) -> &mut dyn Op {
        self.as_op_mut()
    }
}
