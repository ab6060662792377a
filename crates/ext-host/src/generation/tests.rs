use super::*;

#[test]
fn a_points_bit_and_plan_index_follow_the_registry_order() {
    for (index, point) in HookPoint::ALL.iter().enumerate() {
        assert_eq!(*point as usize, index, "{point:?}");
        assert_eq!(bit(*point), 1 << index);
    }
    assert!(HookPoint::ALL.len() <= 32, "the mask is a u32");
    let empty = Generation::empty(3);
    assert_eq!(empty.mask, 0);
    assert!(
        empty
            .plan(HookPoint::FrontendEvent)
            .recipients()
            .next()
            .is_none()
    );
}
